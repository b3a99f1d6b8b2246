//go:build !race

package systemtest

// raceOn says the tests run under the race detector (see race_on_test.go).
const raceOn = false
