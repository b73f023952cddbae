package child

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"io"
)

// Streams are the named streams of random bytes the parts draw their keys
// and passwords from, one each: what one part draws moves nothing another
// gets, so the parts may run in any order and the same Env still gives the
// same answer. Each stream is AES-256 in counter mode, keyed by HKDF-SHA256
// of one seed read from the Env's source and of the stream's name: as
// unpredictable as that source (crypto/rand in the hook). Nothing is read
// or derived until a part draws: a sync whose keys all exist (nearly every
// one) costs nothing here.
type Streams struct {
	source io.Reader
	seed   []byte
	err    error
}

// NewStreams gives the streams whose seed is read from source, at the first
// draw from any of them.
func NewStreams(source io.Reader) *Streams {
	return &Streams{source: source}
}

// Stream is the stream named name, from its start.
func (s *Streams) Stream(name string) io.Reader {
	return &stream{streams: s, name: name}
}

// stream derives its key stream at its first read.
type stream struct {
	streams *Streams
	name    string
	keys    io.Reader
}

func (r *stream) Read(p []byte) (int, error) {
	if r.keys == nil {
		seed, err := r.streams.readSeed()
		if err != nil {
			return 0, err
		}
		key, err := hkdf.Key(sha256.New, seed, nil, "monocle-hook stream "+r.name, 32)
		if err != nil {
			return 0, err
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return 0, err
		}
		r.keys = cipher.StreamReader{S: cipher.NewCTR(block, make([]byte, aes.BlockSize)), R: zeros{}}
	}
	return r.keys.Read(p)
}

// readSeed reads the seed once, and gives it (or the error reading it) to
// every stream.
func (s *Streams) readSeed() ([]byte, error) {
	if s.seed == nil && s.err == nil {
		seed := make([]byte, 32)
		if _, err := io.ReadFull(s.source, seed); err != nil {
			s.err = err
		} else {
			s.seed = seed
		}
	}
	return s.seed, s.err
}

// zeros reads as endless zero bytes: the counter mode's key stream as is.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
