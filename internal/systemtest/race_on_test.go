//go:build race

package systemtest

// raceOn says the tests run under the race detector, which costs 2–20× in
// time: latency gates are then doubled.
const raceOn = true
