package oauth

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseForm(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw  string
		want Form
		err  error
	}{
		{"", Form{}, nil},
		{"a=1&b=x+y&c=%2F", Form{"a": {"1"}, "b": {"x y"}, "c": {"/"}}, nil},
		{"a=1&&b=", Form{"a": {"1"}, "b": {""}}, nil},
		{"a", Form{"a": {""}}, nil},
		{"a=1&a=2", nil, ErrRepeatedParam},
		{"a=&a=2", nil, ErrRepeatedParam},
		{"scope=x&scope=y", Form{"scope": {"x", "y"}}, nil},
		{"a=1;b=2", nil, ErrMalformedForm},
		{"a=%zz", nil, ErrMalformedForm},
		{"%zz=1", nil, ErrMalformedForm},
		{"=1", nil, ErrMalformedForm},
	}
	for _, tt := range tests {
		got, err := ParseForm(tt.raw, "scope")
		if !errors.Is(err, tt.err) {
			t.Errorf("ParseForm(%q) err = %v, want %v", tt.raw, err, tt.err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseForm(%q) mismatch (-want +got):\n%s", tt.raw, diff)
		}
	}
	many := ""
	for i := range MaxParams + 1 {
		many += "&k" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + "=1"
	}
	if _, err := ParseForm(many); !errors.Is(err, ErrTooManyParams) {
		t.Errorf("ParseForm(%d params) = %v, want ErrTooManyParams", MaxParams+1, err)
	}
	f, _ := ParseForm("a=1&b=")
	if f.Has("b") || f.Get("b") != "" || !f.Has("a") || f.Unknown("a", "b") != "" || f.Unknown("a") != "b" {
		t.Error("Form accessors wrong")
	}
}
