//go:build race

package hook

// raceDetector: the tests run with the race detector, whose instrumentation
// changes what is live when the GC samples the heap.
const raceDetector = true
