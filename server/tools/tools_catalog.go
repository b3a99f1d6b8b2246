package tools

import (
	"context"

	"heyaira/oauth"
	"heyaira/server/catalog"
	"heyaira/server/mcp"
	"heyaira/store"
)

// listLayer is one layer in catalog_list. Built-in layers carry their hash and
// sizes; a configured source is read only at dispatch, so until then its
// sha256, bytes, chars and est_tokens are null, and so is a tracking
// source's commit_sha.
type listLayer struct {
	Name string `json:"name"`
	// AccountLayer is the account layer filled ("core", "mode:worker",
	// "mode:verifier"); empty for profile layers.
	AccountLayer     string  `json:"account_layer,omitempty"`
	Source           string  `json:"source"`
	SourceID         string  `json:"source_id"`
	Provenance       string  `json:"provenance"`
	CommitSHA        *string `json:"commit_sha"`
	GitHubOwner      string  `json:"github_owner,omitempty"`
	GitHubRepository string  `json:"github_repository,omitempty"`
	Path             string  `json:"path,omitempty"`
	SHA256           *string `json:"sha256"`
	Bytes            *int    `json:"bytes"`
	Chars            *int    `json:"chars"`
	EstTokens        *int    `json:"est_tokens"`
}

func builtinListLayer(l catalog.Layer, accountLayer string) listLayer {
	return listLayer{Name: l.Name, AccountLayer: accountLayer, Source: l.Source, SourceID: l.SourceID,
		Provenance: l.Provenance, SHA256: &l.SHA256, Bytes: &l.Bytes, Chars: &l.Chars, EstTokens: &l.EstTokens}
}

// sourceListLayer describes a configured source that dispatch will read, by
// its opaque source_id; its GitHub location only when located (list says why).
func sourceListLayer(name, accountLayer, source, id, owner, repo, path string, commit, tracking *string, located bool) listLayer {
	l := listLayer{Name: name, AccountLayer: accountLayer, Source: source, SourceID: id, Provenance: catalog.ProvenancePinned,
		CommitSHA: commit}
	if located {
		l.GitHubOwner, l.GitHubRepository, l.Path = owner, repo, path
	}
	if tracking != nil {
		l.Provenance = catalog.Tracking(*tracking)
	}
	return l
}

type listProfile struct {
	catalog.Profile
	// Layers are the profile's own layers in assembly order: role
	// responsibilities, methodology, the project's role instructions, soul,
	// skills. Core and mode are the account's (account_layers).
	Layers []listLayer `json:"layers"`
}

// list answers catalog_list from the database and the built-in catalog; it
// makes no GitHub request. The tool needs only workflows:read, so which
// repositories and paths the instructions come from is shown only with
// documents:read, the grant that lets an agent near GitHub content.
func (w *workflowTools) list(ctx context.Context, p mcp.Principal, _ *mcp.NoArgs) (any, error) {
	located := p.HasScope(oauth.DocumentsRead)
	profiles := catalog.Profiles()
	// The verifier configuration gives mode:verifier; each profile's worker
	// configuration gives core, mode:worker and its role instructions.
	verifier, err := w.st.DispatchConfig(ctx, p.Auth.ProjectID, profiles[0].Name, "verifier")
	if err != nil {
		return nil, err
	}
	var out []listProfile
	var account []listLayer
	var missing []string
	for i, prof := range profiles {
		cfg, err := w.st.DispatchConfig(ctx, p.Auth.ProjectID, prof.Name, "worker")
		if err != nil {
			return nil, err
		}
		if i == 0 {
			for _, x := range []struct {
				layer, name string
				src         *store.AccountSource
			}{{"core", catalog.LayerCore, cfg.Core}, {"mode:worker", catalog.LayerMode, cfg.Mode},
				{"mode:verifier", catalog.LayerMode, verifier.Mode}} {
				if s := x.src; s != nil {
					account = append(account, sourceListLayer(x.name, x.layer, catalog.SourceAccount, s.ID,
						s.GitHubOwner, s.GitHubRepository, s.Path, s.CommitSHA, s.TrackingRef, located))
					continue
				}
				missing = append(missing, x.layer)
				l, _ := catalog.BuiltinAccountLayer(x.layer)
				account = append(account, builtinListLayer(l, x.layer))
			}
		}
		builtin := catalog.BuiltinLayers(prof.Name)
		lp := listProfile{Profile: prof, Layers: []listLayer{builtinListLayer(builtin[0], ""), builtinListLayer(builtin[1], "")}}
		for _, s := range cfg.Instructions {
			lp.Layers = append(lp.Layers, sourceListLayer(catalog.LayerRoleInstructions, "", catalog.SourceDocument, s.ID,
				s.GitHubOwner, s.GitHubRepository, s.Path, s.CommitSHA, s.TrackingRef, located))
		}
		lp.Layers = append(lp.Layers, builtinListLayer(builtin[2], ""), builtinListLayer(builtin[3], ""))
		out = append(out, lp)
	}
	warnings := []catalog.Warning{}
	if missing != nil {
		warnings = append(warnings, catalog.Warning{Code: catalog.WarningLayersMissing, Layers: missing,
			Message: "the account has no source for some layers; dispatch uses the built-in text for them"})
	}
	return map[string]any{
		"catalog_sha256": catalog.Digest(),
		"layer_order": []string{catalog.LayerCore, catalog.LayerMode, catalog.LayerRoleResponsibilities,
			catalog.LayerMethodology, catalog.LayerRoleInstructions, catalog.LayerSoul, catalog.LayerSkills},
		"modes":          catalog.Modes(),
		"budget_bytes":   catalog.BudgetBytes,
		"account_layers": account,
		"warnings":       warnings,
		"profiles":       out,
	}, nil
}
