package testbodies

import (
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"sync/atomic"
)

// PeakLive runs f with the GC at GOGC=1 and returns how far the live heap
// rose over what it was before, as sampled after each GC cycle: the memory
// tests' measure of what a call holds at once.
func PeakLive(f func()) int64 {
	runtime.GC()
	live := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
	rtmetrics.Read(live)
	before := int64(live[0].Value.Uint64())
	defer debug.SetGCPercent(debug.SetGCPercent(1))
	var peak atomic.Int64
	done, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		s := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
		for {
			select {
			case <-done:
				return
			default:
			}
			rtmetrics.Read(s)
			if v := int64(s[0].Value.Uint64()) - before; v > peak.Load() {
				peak.Store(v)
			}
			runtime.Gosched()
		}
	}()
	f()
	close(done)
	<-sampled
	return peak.Load()
}
