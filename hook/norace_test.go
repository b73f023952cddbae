//go:build !race

package hook

// raceDetector: see race_test.go.
const raceDetector = false
