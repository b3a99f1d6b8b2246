//go:build race

package main

// raceOn says the tests run under the race detector, which costs 2–20× in
// time: latency gates then get security.md §3's 2× CI margin.
const raceOn = true
