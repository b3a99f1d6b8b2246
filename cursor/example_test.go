package cursor_test

import (
	"errors"
	"fmt"
	"time"

	"heyaira/cursor"
)

// The caller's side of a git_document_get continuation: Decode proves the
// cursor authentic and fresh; binding it to this request is a comparison of
// fields, and any difference is cursor_invalid.
func ExampleCodec_Decode() {
	// A key line is 32 random bytes in base64 (openssl rand -base64 32).
	line := "q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80="
	codec, err := cursor.ParseKeys([]byte("# signing key\n" + line + "\n"))
	if err != nil {
		panic(err)
	}
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	next := codec.Encode(cursor.Cursor{
		Kind: "document", Project: "P1", Principal: "U1", Source: "S1",
		Commit: "9fceb02d0ae598e95dc970b74767f19372d61af8", Path: "docs/README.md",
		Offset: 65536, FileSHA256: "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9",
		Expires: now.Add(15 * time.Minute),
	})

	// The next call, made by principal U2 of the same project.
	project, principal, sourceID := "P1", "U2", "S1"
	cur, err := codec.Decode(next, now.Add(time.Minute))
	switch {
	case errors.Is(err, cursor.ErrExpired):
		fmt.Println("cursor_expired")
	case err != nil:
		fmt.Println("cursor_invalid")
	case cur.Kind != "document" || cur.Project != project || cur.Principal != principal || cur.Source != sourceID:
		fmt.Println("cursor_invalid: issued for another request")
	default:
		fmt.Println("continue at byte", cur.Offset)
	}

	_, err = codec.Decode(next, now.Add(15*time.Minute))
	fmt.Println(err)
	// Output:
	// cursor_invalid: issued for another request
	// cursor: expired
}
