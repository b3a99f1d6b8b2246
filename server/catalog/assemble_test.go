package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

const (
	commitA = "1111111111111111111111111111111111111111"
	commitB = "2222222222222222222222222222222222222222"
	commitC = "3333333333333333333333333333333333333333"
)

func accountText(id, provenance, commit, path, content string) *Text {
	return &Text{Source: SourceAccount, SourceID: id, Provenance: provenance, CommitSHA: commit,
		GitHubOwner: "acme", GitHubRepository: "agents", Path: path, Content: content}
}

func projectText(id, provenance, commit, path, content string) Text {
	return Text{Source: SourceDocument, SourceID: id, Provenance: provenance, CommitSHA: commit,
		GitHubOwner: "acme", GitHubRepository: "app", Path: path, Content: content}
}

// TestAssembleGolden assembles each case and compares the layer metadata,
// warnings and budget (as JSON, without text) and the rendered instructions
// with testdata/<name>.golden. `go test ./server/catalog -update` rewrites them.
func TestAssembleGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   Input
		note string
	}{
		{name: "builtin_only", in: Input{Profile: "engineer", Mode: "worker"}},
		{name: "verifier_without_mode", in: Input{Profile: "reviewer", Mode: "verifier",
			Core: accountText("c0000000-0000-0000-0000-000000000001", Tracking("main"), commitA,
				"docs/agents/core.md", "Account core rules.\n")}},
		{name: "all_sources", in: Input{Profile: "researcher", Mode: "worker",
			Core: accountText("c0000000-0000-0000-0000-000000000001", Tracking("main"), commitA,
				"docs/agents/core.md", "Account core rules.\n"),
			ModeText: accountText("c0000000-0000-0000-0000-000000000002", ProvenancePinned, commitB,
				"docs/agents/worker.md", "Worker mode, account edition."),
			RoleInstructions: []Text{
				projectText("d0000000-0000-0000-0000-000000000001", ProvenancePinned, commitC,
					"docs/all-profiles.md", "For every profile of this project.\n"),
				projectText("d0000000-0000-0000-0000-000000000002", Tracking("release/2.x"), commitB,
					"docs/researcher.md", "Only for researchers.\n"),
			}}},
		// chars counts code points, bytes counts UTF-8: "é" is 1 char, 2 bytes;
		// "✓" 1 char, 3 bytes; "😀" 1 char, 4 bytes. 9 chars → est_tokens 3.
		{name: "unicode", in: Input{Profile: "engineer", Mode: "verifier",
			Core:     accountText("c0000000-0000-0000-0000-000000000001", ProvenancePinned, commitA, "docs/agents/core.md", "héllo ✓😀\n"),
			ModeText: accountText("c0000000-0000-0000-0000-000000000003", ProvenancePinned, commitA, "docs/agents/verifier.md", "")}},
		{name: "correction_note", note: "Use the staging database, not production.", in: Input{Profile: "engineer", Mode: "worker"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, err := Assemble(tt.in)
			if err != nil {
				t.Fatalf("Assemble: %v", err)
			}
			meta := *a
			meta.Layers = WithoutText(a.Layers)
			js, err := json.MarshalIndent(meta, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got := "-- assembly.json --\n" + string(js) + "\n-- instructions.md --\n" +
				Render(a.Profile, a.Mode, a.Layers, tt.note)
			golden(t, tt.name, got)
		})
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./server/catalog -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// TestLayerMeasuresRawText checks each metric against an independent
// computation on the raw text, never on the headings.
func TestLayerMeasuresRawText(t *testing.T) {
	t.Parallel()
	content := "Ünïcödé core\nsecond line ✓\n"
	a, err := Assemble(Input{Profile: "engineer", Mode: "worker",
		Core: accountText("c1", Tracking("main"), commitA, "docs/agents/core.md", content)})
	if err != nil {
		t.Fatal(err)
	}
	core := a.Layers[0]
	sum := sha256.Sum256([]byte(content))
	chars := len([]rune(content))
	want := Layer{Name: LayerCore, Source: SourceAccount, SourceID: "c1", Provenance: "tracking:main",
		CommitSHA: ptr(commitA), GitHubOwner: "acme", GitHubRepository: "agents", Path: "docs/agents/core.md",
		SHA256: hex.EncodeToString(sum[:]), Bytes: len(content), Chars: chars,
		EstTokens: (chars + 3) / 4, Text: content}
	if diff := cmp.Diff(want, core); diff != "" {
		t.Errorf("core layer (-want +got):\n%s", diff)
	}
	if core.Chars == core.Bytes {
		t.Fatalf("test text must make chars and bytes differ")
	}
	for _, l := range a.Layers {
		if strings.Contains(l.Text, "## ") {
			t.Errorf("layer %s text holds an assembly heading", l.Name)
		}
	}
}

func TestEstTokens(t *testing.T) {
	t.Parallel()
	for chars, want := range map[int]int{0: 0, 1: 1, 3: 1, 4: 1, 5: 2, 8: 2, 9: 3, 61440: 15360} {
		if got := EstTokens(chars); got != want {
			t.Errorf("EstTokens(%d) = %d, want %d", chars, got, want)
		}
	}
}

func TestLayerOrder(t *testing.T) {
	t.Parallel()
	a, err := Assemble(Input{Profile: "reviewer", Mode: "worker",
		RoleInstructions: []Text{projectText("d1", ProvenancePinned, commitA, "a.md", "a"),
			projectText("d2", ProvenancePinned, commitA, "b.md", "b")}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range a.Layers {
		got = append(got, l.Name+":"+l.SourceID)
	}
	want := []string{"core:builtin:core", "mode:builtin:mode:worker",
		"role_responsibilities:builtin:reviewer/role_responsibilities", "methodology:builtin:reviewer/methodology",
		"role_instructions:d1", "role_instructions:d2", "soul:builtin:reviewer/soul", "skills:builtin:reviewer/skills"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("layer order (-want +got):\n%s", diff)
	}
}

// TestBudget pins the 61,440-byte limit over core + mode + role
// instructions: exactly at the limit passes, one byte over fails with every
// budgeted layer's size; built-in profile layers never count.
func TestBudget(t *testing.T) {
	t.Parallel()
	core := strings.Repeat("c", 20000)
	mode := strings.Repeat("m", 20000)
	input := func(ri string) Input {
		return Input{Profile: "engineer", Mode: "worker",
			Core:             accountText("core-id", ProvenancePinned, commitA, "docs/agents/core.md", core),
			ModeText:         accountText("mode-id", ProvenancePinned, commitA, "docs/agents/w.md", mode),
			RoleInstructions: []Text{projectText("ri-id", ProvenancePinned, commitB, "ri.md", ri)}}
	}
	a, err := Assemble(input(strings.Repeat("r", BudgetBytes-40000)))
	if err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	if a.Budget != (Budget{LimitBytes: 61440, UsedBytes: 61440}) {
		t.Errorf("budget = %+v", a.Budget)
	}
	// A multi-byte character: the budget counts bytes, not characters.
	_, err = Assemble(input(strings.Repeat("r", BudgetBytes-40000-1) + "é"))
	var be *BudgetError
	if !errors.As(err, &be) {
		t.Fatalf("one byte over: err = %v, want *BudgetError", err)
	}
	want := &BudgetError{Limit: 61440, Total: 61441, Layers: []LayerSize{
		{Name: "core", Source: SourceAccount, SourceID: "core-id", Bytes: 20000},
		{Name: "mode", Source: SourceAccount, SourceID: "mode-id", Bytes: 20000},
		{Name: "role_instructions", Source: SourceDocument, SourceID: "ri-id", Bytes: 21441},
	}}
	if diff := cmp.Diff(want, be); diff != "" {
		t.Errorf("BudgetError (-want +got):\n%s", diff)
	}
	if !strings.Contains(be.Error(), "61441") || !strings.Contains(be.Error(), "role_instructions 21441") {
		t.Errorf("Error() = %q lacks the sizes", be.Error())
	}
}

func TestAssembleRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   Input
		want error
	}{
		{Input{Profile: "pirate", Mode: "worker"}, ErrUnknownProfile},
		{Input{Profile: "", Mode: "worker"}, ErrUnknownProfile},
		{Input{Profile: "engineer", Mode: "boss"}, ErrUnknownMode},
		{Input{Profile: "engineer", Mode: ""}, ErrUnknownMode},
	}
	for _, tt := range tests {
		if _, err := Assemble(tt.in); !errors.Is(err, tt.want) {
			t.Errorf("Assemble(%q, %q) = %v, want %v", tt.in.Profile, tt.in.Mode, err, tt.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }
