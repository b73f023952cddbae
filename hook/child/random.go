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
// unpredictable as that source (crypto/rand in the hook).
type Streams struct{ seed []byte }

// NewStreams reads the seed of the streams from source.
func NewStreams(source io.Reader) (Streams, error) {
	seed := make([]byte, 32)
	if _, err := io.ReadFull(source, seed); err != nil {
		return Streams{}, err
	}
	return Streams{seed: seed}, nil
}

// Stream is the stream named name, from its start.
func (s Streams) Stream(name string) io.Reader {
	key, err := hkdf.Key(sha256.New, s.seed, nil, "monocle-hook stream "+name, 32)
	if err != nil {
		panic(err) // only for a key over 255 hashes
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		panic(err) // only for a key that is not 16, 24 or 32 bytes
	}
	return cipher.StreamReader{S: cipher.NewCTR(block, make([]byte, aes.BlockSize)), R: zeros{}}
}

// zeros reads as endless zero bytes: the counter mode's key stream as is.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
