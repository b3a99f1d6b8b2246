package main

import (
	"sync"
	"testing"
	"time"
)

// Row TP-10: HEYAIRA_GITHUB_MAX_INFLIGHT is the cap per replica. Two
// replicas with a cap of 3 each, behind nginx, get 40 concurrent document
// reads with GitHub answering in 300 ms: GitHub never sees more than 6
// requests at once (the sum of the caps), and a read that finds no slot in
// time answers rate_limited, never an error of another kind.
func TestTP10GitHubCapPerReplica(t *testing.T) {
	tp := newTopology(t, map[string]string{"HEYAIRA_GITHUB_MAX_INFLIGHT": "3"})
	tp.gh.SetLatency(300 * time.Millisecond)
	tokens := tp.principals(t, 4)
	var mu sync.Mutex
	codes := map[string]int{}
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := tp.client("127.0.0.6").toolCall(tokens[i%len(tokens)], "git_document_get", map[string]any{"source_id": tp.source})
			mu.Lock()
			codes[o.code]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	peak := tp.gh.MaxInFlight()
	t.Logf("TP-10: 40 concurrent reads, cap 3 per replica × 2: GitHub peak in flight %d; %v", peak, codes)
	if peak > 6 || peak == 0 {
		t.Errorf("GitHub saw %d requests at once, want 1 to 6", peak)
	}
	if codes["ok"]+codes["rate_limited"] != 40 || codes["ok"] == 0 {
		t.Errorf("outcomes %v, want only ok and rate_limited", codes)
	}
}
