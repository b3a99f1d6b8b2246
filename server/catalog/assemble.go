package catalog

import (
	"errors"
	"fmt"
	"strings"
)

// Errors returned by Assemble besides *BudgetError.
var (
	// ErrUnknownProfile: the profile is not in the built-in catalog.
	ErrUnknownProfile = errors.New("catalog: unknown profile")
	// ErrUnknownMode: the mode is neither worker nor verifier.
	ErrUnknownMode = errors.New("catalog: unknown mode")
)

// WarningLayersMissing is the code of the warning Assemble returns when the
// account has no core and/or no mode source for the requested mode.
const WarningLayersMissing = "catalog.layers_missing"

// Warning is a non-fatal finding of an assembly.
type Warning struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Layers names the account layers concerned ("core", "mode:worker", …).
	Layers []string `json:"layers"`
}

// Text is one source text the caller read from GitHub for an assembly.
type Text struct {
	Source     string // SourceAccount or SourceDocument
	SourceID   string // the account_sources or document_sources id
	Provenance string // ProvenancePinned or Tracking(branch)
	CommitSHA  string // the commit the text was read at (40 hex)
	// GitHubOwner, GitHubRepository and Path say where the text lives.
	GitHubOwner, GitHubRepository, Path string
	Content                             string
}

// Input is everything an assembly depends on besides the built-in catalog.
type Input struct {
	Profile string
	Mode    string // "worker" or "verifier"
	// Core and ModeText are the account's sources for the core layer and
	// for "mode:<Mode>"; nil when the account has none.
	Core, ModeText *Text
	// RoleInstructions are the project's instruction sources for this
	// profile, in the order they are assembled; each is one layer.
	RoleInstructions []Text
}

// Assembly is an assembled profile: its layers in order, with their text.
type Assembly struct {
	Profile  string    `json:"profile"`
	Mode     string    `json:"mode"`
	Layers   []Layer   `json:"layers"`
	Warnings []Warning `json:"warnings"`
	Budget   Budget    `json:"budget"`
}

// Budget reports the source-text budget: bytes of core, mode and role
// instructions, against BudgetBytes.
type Budget struct {
	LimitBytes int `json:"limit_bytes"`
	UsedBytes  int `json:"used_bytes"`
}

// BudgetError is returned when core, mode and role instructions together are
// longer than BudgetBytes. Layers lists every budgeted layer and its size.
type BudgetError struct {
	Limit  int         `json:"limit_bytes"`
	Total  int         `json:"total_bytes"`
	Layers []LayerSize `json:"layers"`
}

// LayerSize is one budgeted layer's size in a BudgetError.
type LayerSize struct {
	Name     string `json:"name"`
	Source   string `json:"source"`
	SourceID string `json:"source_id"`
	Bytes    int    `json:"bytes"`
}

func (e *BudgetError) Error() string {
	parts := make([]string, len(e.Layers))
	for i, l := range e.Layers {
		parts[i] = fmt.Sprintf("%s %d", l.Name, l.Bytes)
	}
	return fmt.Sprintf("core, mode and role instructions are %d bytes, over the %d-byte budget (%s)",
		e.Total, e.Limit, strings.Join(parts, ", "))
}

// Assemble builds the profile's layers in order: core, mode, role
// responsibilities, methodology, each role instruction, soul, skills. A
// missing account core or mode keeps the built-in (previous) text and adds a
// catalog.layers_missing warning naming the missing layers. It fails with
// ErrUnknownProfile, ErrUnknownMode, or *BudgetError when core, mode and role
// instructions exceed BudgetBytes.
func Assemble(in Input) (*Assembly, error) {
	builtin := BuiltinLayers(in.Profile)
	if builtin == nil {
		return nil, ErrUnknownProfile
	}
	if in.Mode != "worker" && in.Mode != "verifier" {
		return nil, ErrUnknownMode
	}
	a := &Assembly{Profile: in.Profile, Mode: in.Mode, Warnings: []Warning{}}
	var missing []string
	account := func(accountLayer, name string, t *Text) Layer {
		if t == nil {
			missing = append(missing, accountLayer)
			l, _ := BuiltinAccountLayer(accountLayer)
			return l
		}
		return fromText(name, *t)
	}
	core := account("core", LayerCore, in.Core)
	mode := account("mode:"+in.Mode, LayerMode, in.ModeText)
	a.Layers = append(a.Layers, core, mode, builtin[0], builtin[1])
	for _, t := range in.RoleInstructions {
		a.Layers = append(a.Layers, fromText(LayerRoleInstructions, t))
	}
	a.Layers = append(a.Layers, builtin[2], builtin[3])

	// A budgeted layer counts whatever its source (a built-in fallback too), so the limit
	// does not depend on configuration.
	e := &BudgetError{Limit: BudgetBytes}
	for _, l := range a.Layers {
		if l.Name == LayerCore || l.Name == LayerMode || l.Name == LayerRoleInstructions {
			e.Total += l.Bytes
			e.Layers = append(e.Layers, LayerSize{Name: l.Name, Source: l.Source, SourceID: l.SourceID, Bytes: l.Bytes})
		}
	}
	if e.Total > BudgetBytes {
		return nil, e
	}
	a.Budget = Budget{LimitBytes: BudgetBytes, UsedBytes: e.Total}
	if len(missing) > 0 {
		a.Warnings = append(a.Warnings, Warning{
			Code: WarningLayersMissing,
			Message: "the account has no source for " + strings.Join(missing, " and ") +
				"; the built-in text is used instead",
			Layers: missing,
		})
	}
	return a, nil
}

func fromText(name string, t Text) Layer {
	l := newLayer(name, t.Source, t.SourceID, t.Provenance, t.CommitSHA, t.Content)
	l.GitHubOwner, l.GitHubRepository, l.Path = t.GitHubOwner, t.GitHubRepository, t.Path
	return l
}

// Render returns the assembled instructions: a title, then each layer's raw
// text under a "## " heading, then the correction note when there is one.
// The headings are not part of any layer's hash or size.
func Render(profile, mode string, layers []Layer, correctionNote string) string {
	var b strings.Builder
	title := profile
	if p, ok := Lookup(profile); ok {
		title = p.Title
	}
	fmt.Fprintf(&b, "# %s (%s)\n", title, mode)
	section := func(heading, text string) {
		b.WriteString("\n## " + heading + "\n\n" + text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteByte('\n')
		}
	}
	for _, l := range layers {
		section(heading(l, mode), l.Text)
	}
	if correctionNote != "" {
		section("Correction", correctionNote)
	}
	return b.String()
}

// headings are the layers' headings in Render, but for mode's and a
// located role instruction's, which name the mode and the source.
var headings = map[string]string{LayerCore: "Core", LayerRoleResponsibilities: "Role responsibilities",
	LayerMethodology: "Methodology", LayerRoleInstructions: "Role instructions", LayerSoul: "Soul", LayerSkills: "Skills"}

func heading(l Layer, mode string) string {
	switch h, ok := headings[l.Name]; {
	case l.Name == LayerMode:
		return "Mode: " + mode
	case l.Name == LayerRoleInstructions && l.Path != "":
		return "Role instructions (" + l.GitHubOwner + "/" + l.GitHubRepository + ": " + l.Path + ")"
	case ok:
		return h
	}
	return l.Name
}
