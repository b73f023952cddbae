package child

import (
	"bytes"
	"io"
	"testing"
)

// Each named stream is its own: the same seed and name give the same
// bytes, whatever was drawn from another stream, and two names or two seeds
// give different bytes.
func TestStreams(t *testing.T) {
	draw := func(s Streams, name string) []byte {
		b := make([]byte, 64)
		if _, err := io.ReadFull(s.Stream(name), b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	seed := func(b byte) Streams {
		s, err := NewStreams(bytes.NewReader(bytes.Repeat([]byte{b}, 32)))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := seed(1)
	pods := draw(a, "pods")
	draw(a, "elastic") // another stream drawn first moves nothing
	if again := draw(a, "pods"); !bytes.Equal(again, pods) {
		t.Errorf("the pods' stream changed: %x, then %x", pods, again)
	}
	if bytes.Equal(draw(a, "elastic"), pods) {
		t.Error("two names give the same stream")
	}
	if bytes.Equal(draw(seed(2), "pods"), pods) {
		t.Error("two seeds give the same stream")
	}
	if bytes.Equal(pods[:32], pods[32:]) || bytes.Equal(pods, make([]byte, 64)) {
		t.Errorf("the stream repeats itself: %x", pods)
	}
	if _, err := NewStreams(bytes.NewReader(make([]byte, 31))); err == nil {
		t.Error("a source of 31 bytes gave a seed")
	}
}
