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
	draw := func(s *Streams, name string) []byte {
		b := make([]byte, 64)
		if _, err := io.ReadFull(s.Stream(name), b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	seed := func(b byte) *Streams {
		return NewStreams(bytes.NewReader(bytes.Repeat([]byte{b}, 32)))
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
	short := NewStreams(bytes.NewReader(make([]byte, 31)))
	if _, err := short.Stream("pods").Read(make([]byte, 1)); err == nil {
		t.Error("a source of 31 bytes gave a seed")
	}
	// Nothing is read from the source until a part draws.
	source := bytes.NewReader(make([]byte, 32))
	lazy := NewStreams(source)
	lazy.Stream("pods")
	if source.Len() != 32 {
		t.Errorf("making a stream read %d bytes of the source; want none until a draw", 32-source.Len())
	}
}
