package server

import (
	"slices"

	"heyaira/oauth"
	"heyaira/store"
)

// stepUp tells a step-up from a first request: projects are the
// principal's, grants the principal's active grants to this client (by
// project), requested the request's scopes. When some granted project
// lacks a requested scope, it returns what is new and narrows the project
// choice to those projects, because that is the grant the client comes back
// to widen. Otherwise it returns nil and the projects unchanged.
func stepUp(projects []store.Project, grants map[string][]string, requested []string) (*oauth.StepUp, []store.Project) {
	var lacking []store.Project
	var newScopes []string
	for _, p := range projects {
		granted, ok := grants[p.ID]
		if !ok {
			continue
		}
		have := func(s string) bool { return slices.Contains(granted, s) }
		missing := slices.DeleteFunc(slices.Clone(requested), have)
		if len(missing) == 0 {
			continue
		}
		lacking = append(lacking, p)
		newScopes = append(newScopes, missing...)
	}
	if len(lacking) == 0 {
		return nil, projects
	}
	s := &oauth.StepUp{}
	if len(lacking) == 1 {
		s.Project = lacking[0].Name
	}
	for _, sc := range oauth.Canonical(newScopes) {
		if sc == oauth.DocumentsRead {
			s.Documents = true
			continue
		}
		s.Others = append(s.Others, oauth.Descriptions[sc])
	}
	return s, lacking
}
