package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

var testCreated = time.Date(2026, 11, 30, 4, 59, 34, 0, time.UTC)

func testSpec() imageSpec {
	return imageSpec{
		version:  "1.2.3",
		revision: "0123456789abcdef0123456789abcdef01234567",
		created:  testCreated,
		source:   "https://github.com/change-metrics/monocle-hook",
		binaries: map[string][]byte{
			"linux/amd64": []byte("\x7fELF amd64 binary"),
			"linux/arm64": []byte("\x7fELF arm64 binary"),
		},
	}
}

var testPlatforms = []string{"linux/amd64", "linux/arm64"}

// buildOnDisk runs the build command's steps into a fresh folder and
// returns the index digest, the archive's bytes and the layout folder.
func buildOnDisk(t *testing.T, s imageSpec) (v1.Hash, []byte, string) {
	t.Helper()
	idx, err := buildIndex(s, testPlatforms)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "oci")
	archive := filepath.Join(t.TempDir(), "image.tar")
	if err := writeLayout(dir, idx, s.version); err != nil {
		t.Fatal(err)
	}
	if err := writeArchive(archive, dir, s.created); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	digest, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return digest, b, dir
}

// Same inputs, same image: the digest and the archive's bytes, whatever the
// folder, the time of the build or the files' own times.
func TestReproducible(t *testing.T) {
	d1, a1, dir1 := buildOnDisk(t, testSpec())
	// Later, elsewhere, with the layout's files touched in between.
	future := time.Now().Add(time.Hour)
	if err := filepath.Walk(dir1, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, future, future)
	}); err != nil {
		t.Fatal(err)
	}
	d2, a2, _ := buildOnDisk(t, testSpec())
	if d1 != d2 {
		t.Errorf("two builds: digests %s and %s", d1, d2)
	}
	if !bytes.Equal(a1, a2) {
		t.Errorf("two builds: archives of %d and %d bytes differ", len(a1), len(a2))
	}
	// The digest of the index the layout holds is the one printed.
	idx, err := layoutIndex(dir1)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := idx.Digest(); d != d1 {
		t.Errorf("the layout's index is %s, built %s", d, d1)
	}
}

// Each input that names the image changes its digest.
func TestDigestFollowsInputs(t *testing.T) {
	base, _, _ := buildOnDisk(t, testSpec())
	for _, tc := range []struct {
		name   string
		change func(*imageSpec)
	}{
		{"binary", func(s *imageSpec) { s.binaries["linux/arm64"] = []byte("\x7fELF other") }},
		{"version", func(s *imageSpec) { s.version = "1.2.4" }},
		{"revision", func(s *imageSpec) { s.revision = "fedcba9876543210fedcba9876543210fedcba98" }},
		{"created", func(s *imageSpec) { s.created = s.created.Add(time.Second) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testSpec()
			s.binaries = maps.Clone(s.binaries)
			tc.change(&s)
			if d, _, _ := buildOnDisk(t, s); d == base {
				t.Errorf("changing the %s left the digest %s", tc.name, d)
			}
		})
	}
}

// The index and each image: OCI media types, the platforms, the config the
// Dockerfile's last stage gives, one layer holding only the binary.
func TestImageContent(t *testing.T) {
	s := testSpec()
	idx, err := buildIndex(s, testPlatforms)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if im.MediaType != types.OCIImageIndex {
		t.Errorf("index media type %s", im.MediaType)
	}
	if !maps.Equal(im.Annotations, s.labels()) {
		t.Errorf("index annotations %v, want %v", im.Annotations, s.labels())
	}
	var platforms []string
	for _, desc := range im.Manifests {
		platforms = append(platforms, desc.Platform.String())
		img, err := idx.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		m, err := img.Manifest()
		if err != nil {
			t.Fatal(err)
		}
		if m.MediaType != types.OCIManifestSchema1 || m.Config.MediaType != types.OCIConfigJSON {
			t.Errorf("%s: manifest %s, config %s; want OCI", desc.Platform, m.MediaType, m.Config.MediaType)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.OS+"/"+cf.Architecture != desc.Platform.String() {
			t.Errorf("config for %s says %s/%s", desc.Platform, cf.OS, cf.Architecture)
		}
		if cf.Config.User != "65532:65532" || !slices.Equal(cf.Config.Entrypoint, []string{"/monocle-hook"}) ||
			len(cf.Config.Cmd) != 0 || len(cf.Config.Env) != 0 {
			t.Errorf("%s: user %q entrypoint %q cmd %q env %q", desc.Platform, cf.Config.User, cf.Config.Entrypoint, cf.Config.Cmd, cf.Config.Env)
		}
		if _, ok := cf.Config.ExposedPorts["8080/tcp"]; !ok || len(cf.Config.ExposedPorts) != 1 {
			t.Errorf("%s: exposed ports %v, want 8080/tcp", desc.Platform, cf.Config.ExposedPorts)
		}
		if !maps.Equal(cf.Config.Labels, s.labels()) {
			t.Errorf("%s: labels %v", desc.Platform, cf.Config.Labels)
		}
		for k, want := range map[string]string{
			"org.opencontainers.image.version":  "1.2.3",
			"org.opencontainers.image.revision": s.revision,
			"org.opencontainers.image.created":  "2026-11-30T04:59:34Z",
			"org.opencontainers.image.licenses": "Apache-2.0",
			"org.opencontainers.image.source":   "https://github.com/change-metrics/monocle-hook",
		} {
			if cf.Config.Labels[k] != want {
				t.Errorf("%s: label %s=%q, want %q", desc.Platform, k, cf.Config.Labels[k], want)
			}
		}
		if !cf.Created.Time.Equal(testCreated) || len(cf.History) != 1 || !cf.History[0].Created.Time.Equal(testCreated) {
			t.Errorf("%s: created %v, history %+v; want every time %v", desc.Platform, cf.Created, cf.History, testCreated)
		}

		layers, err := img.Layers()
		if err != nil {
			t.Fatal(err)
		}
		if len(layers) != 1 {
			t.Fatalf("%s: %d layers, want 1", desc.Platform, len(layers))
		}
		if mt, _ := layers[0].MediaType(); mt != types.OCILayer {
			t.Errorf("%s: layer media type %s", desc.Platform, mt)
		}
		rc, err := layers[0].Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		var names []string
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, h.Name)
			body, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if h.Name != "monocle-hook" || h.Mode != 0o755 || h.Uid != 0 || h.Gid != 0 || !h.ModTime.Equal(testCreated) ||
				!bytes.Equal(body, s.binaries[desc.Platform.String()]) {
				t.Errorf("%s: layer entry %s mode %o owner %d:%d time %v, %d bytes; want monocle-hook 755 0:0 %v, the platform's binary",
					desc.Platform, h.Name, h.Mode, h.Uid, h.Gid, h.ModTime, len(body), testCreated)
			}
		}
		rc.Close()
		if len(names) != 1 {
			t.Errorf("%s: layer holds %q, want only monocle-hook", desc.Platform, names)
		}
	}
	if !slices.Equal(platforms, testPlatforms) {
		t.Errorf("index platforms %v, want %v", platforms, testPlatforms)
	}
}

func TestBuildRejects(t *testing.T) {
	s := testSpec()
	delete(s.binaries, "linux/arm64")
	if _, err := buildIndex(s, testPlatforms); err == nil {
		t.Error("a platform without a binary: built")
	}
	if _, err := buildIndex(testSpec(), []string{"linux"}); err == nil {
		t.Error(`platform "linux": built`)
	}
}
