// Package catalog is HeyAira's built-in catalog of agent profiles and the pure
// function that assembles one profile for a workflow dispatch.
//
// A profile is assembled from layers, always in this order:
//
//	core, mode, role_responsibilities, methodology, role_instructions…, soul, skills
//
// The built-in catalog (embedded text files, see Profiles) supplies each
// profile's role responsibilities, methodology, soul and skills, and the
// previous core and mode texts used when an account has configured none. The
// caller supplies what it read from GitHub: the account's core and mode
// sources and the project's role-instruction sources, each at the commit it
// was read at. The package reads nothing itself: no network, no database, no
// clock, so Assemble is deterministic and tested with golden files.
//
// Every layer reports the SHA-256, byte length and character count of its raw
// text (never of the assembly headings) and est_tokens = ceil(chars/4). chars
// counts Unicode code points, bytes counts UTF-8 bytes; the budget is in bytes.
//
// This package imports only the standard library (docs/design.md §2).
package catalog

import (
	"crypto/sha256"
	"embed"
	"encoding/binary"
	"encoding/hex"
	"io/fs"
	"slices"
	"unicode/utf8"
)

// Layer names, in assembly order.
const (
	LayerCore                 = "core"
	LayerMode                 = "mode"
	LayerRoleResponsibilities = "role_responsibilities"
	LayerMethodology          = "methodology"
	LayerRoleInstructions     = "role_instructions"
	LayerSoul                 = "soul"
	LayerSkills               = "skills"
)

// Where a layer's text came from.
const (
	SourceBuiltin  = "builtin"         // this package's embedded files
	SourceAccount  = "account_source"  // an account_sources row (core, mode)
	SourceDocument = "document_source" // a project document_sources row (role instructions)
)

// Provenance values. A tracking source's provenance is Tracking(branch).
const (
	ProvenanceBuiltin = "builtin"
	ProvenancePinned  = "pinned"
)

// Tracking is the provenance of a source that follows branch: "tracking:<branch>".
func Tracking(branch string) string { return "tracking:" + branch }

// Modes are the dispatch modes, in the order catalog_list shows them.
func Modes() []string { return []string{"worker", "verifier"} }

// BudgetBytes bounds the source text of one profile: the bytes of the core,
// mode and role-instruction layers together (60 KiB).
const BudgetBytes = 61440

// Profile is one built-in profile.
type Profile struct {
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
}

// profiles is the built-in catalog, in the order catalog_list shows it. Each
// has profiles/<name>/{role_responsibilities,methodology,soul,skills}.md.
var profiles = []Profile{
	{"engineer", "Engineer", "Builds and changes software: designs, codes, tests and documents one task end to end."},
	{"reviewer", "Reviewer", "Reviews a change for correctness, tests, security and fit, and decides whether it is ready."},
	{"researcher", "Researcher", "Answers a question with sourced evidence, separating facts, inferences and open questions."},
}

// profileLayers are the built-in layers every profile has, in assembly order
// (role instructions come between methodology and soul).
var profileLayers = []string{LayerRoleResponsibilities, LayerMethodology, LayerSoul, LayerSkills}

//go:embed builtin/*.md profiles/*/*.md
var files embed.FS

// builtinText returns an embedded file; a missing file is a build mistake
// that TestBuiltinCatalogComplete catches, so it panics.
func builtinText(name string) string {
	b, err := fs.ReadFile(files, name)
	if err != nil {
		panic("catalog: missing built-in file " + name)
	}
	return string(b)
}

// Profiles returns the built-in profiles.
func Profiles() []Profile { return slices.Clone(profiles) }

// Lookup returns the built-in profile called name.
func Lookup(name string) (Profile, bool) {
	for _, p := range profiles {
		if p.Name == name {
			return p, true
		}
	}
	return Profile{}, false
}

// BuiltinLayers returns the built-in layers of profile (role
// responsibilities, methodology, soul, skills) with their text, or nil for
// an unknown profile.
func BuiltinLayers(profile string) []Layer {
	if _, ok := Lookup(profile); !ok {
		return nil
	}
	out := make([]Layer, 0, len(profileLayers))
	for _, name := range profileLayers {
		text := builtinText("profiles/" + profile + "/" + name + ".md")
		out = append(out, newLayer(name, SourceBuiltin, "builtin:"+profile+"/"+name, ProvenanceBuiltin, "", text))
	}
	return out
}

// BuiltinAccountLayer returns the previous (built-in) text of an account
// layer — "core", "mode:worker" or "mode:verifier" — as the layer it fills
// when the account has no source for it. ok is false for any other name.
func BuiltinAccountLayer(accountLayer string) (l Layer, ok bool) {
	switch accountLayer {
	case "core":
		return newLayer(LayerCore, SourceBuiltin, "builtin:core", ProvenanceBuiltin, "", builtinText("builtin/core.md")), true
	case "mode:worker", "mode:verifier":
		mode := accountLayer[len("mode:"):]
		return newLayer(LayerMode, SourceBuiltin, "builtin:"+accountLayer, ProvenanceBuiltin, "",
			builtinText("builtin/mode-"+mode+".md")), true
	}
	return Layer{}, false
}

// Digest is the SHA-256 of the whole built-in catalog (every embedded file's
// name and content, length-prefixed, in name order). A frozen workflow
// records it, so a replay can tell which built-in texts it was assembled with.
func Digest() string {
	var names []string
	fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return nil
	})
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		for _, part := range []string{n, builtinText(n)} {
			h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(part))))
			h.Write([]byte(part))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Layer is one assembled layer: where its text came from, and the hash and
// size of that raw text. Text is the raw text itself; callers that show only
// metadata clear it (it is omitted from JSON when empty).
type Layer struct {
	Name       string `json:"name"`
	Source     string `json:"source"`
	SourceID   string `json:"source_id"`
	Provenance string `json:"provenance"`
	// CommitSHA is the commit the text was read at; nil for built-in layers.
	CommitSHA *string `json:"commit_sha"`
	// The GitHub location of a source's text; empty for built-in layers.
	GitHubOwner      string `json:"github_owner,omitempty"`
	GitHubRepository string `json:"github_repository,omitempty"`
	Path             string `json:"path,omitempty"`
	// The raw text's lowercase hex SHA-256, its length in UTF-8 bytes (what
	// the budget counts) and in code points, and ceil(Chars/4), a rough estimate.
	SHA256    string `json:"sha256"`
	Bytes     int    `json:"bytes"`
	Chars     int    `json:"chars"`
	EstTokens int    `json:"est_tokens"`
	Text      string `json:"text,omitempty"`
}

// newLayer measures text and returns the layer describing it.
func newLayer(name, source, sourceID, provenance, commit, text string) Layer {
	sum := sha256.Sum256([]byte(text))
	chars := utf8.RuneCountInString(text)
	l := Layer{
		Name: name, Source: source, SourceID: sourceID, Provenance: provenance,
		SHA256: hex.EncodeToString(sum[:]), Bytes: len(text), Chars: chars,
		EstTokens: EstTokens(chars), Text: text,
	}
	if commit != "" {
		l.CommitSHA = &commit
	}
	return l
}

// EstTokens is ceil(chars/4).
func EstTokens(chars int) int { return (chars + 3) / 4 }

// WithoutText returns a copy of layers with every Text cleared: the metadata
// a compact view shows.
func WithoutText(layers []Layer) []Layer {
	out := slices.Clone(layers)
	for i := range out {
		out[i].Text = ""
	}
	return out
}
