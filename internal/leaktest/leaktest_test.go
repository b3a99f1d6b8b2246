package leaktest

import (
	"os"
	"strings"
	"testing"
)

// Row LD-05 (docs/security-tests.md).
func TestMain(m *testing.M) { os.Exit(Main(m)) }

// parkedForLeakTest blocks until stop is closed: a goroutine the check must
// see while it runs and must not see once it has ended.
func parkedForLeakTest(started chan<- struct{}, stop <-chan struct{}, done chan<- struct{}) {
	close(started)
	<-stop
	close(done)
}

func TestLeakedSeesARunningGoroutineAndNotAnEndedOne(t *testing.T) {
	started, stop, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go parkedForLeakTest(started, stop, done)
	<-started
	if got := Leaked(0); !strings.Contains(got, "parkedForLeakTest") {
		t.Fatalf("Leaked did not report the parked goroutine; got:\n%s", got)
	}
	close(stop)
	<-done
	if got := Leaked(Grace); strings.Contains(got, "parkedForLeakTest") {
		t.Fatalf("Leaked still reports the goroutine after it ended:\n%s", got)
	}
}
