// image builds monocle-hook's multi-platform OCI image without a Docker
// daemon, and pushes it. `make image` and `make push` run it.
//
// The image is what the Dockerfile's last stage makes: an empty base (FROM
// scratch) holding only the static binary at /monocle-hook, run as
// 65532:65532. It is reproducible: every timestamp is the commit's time,
// every file's owner and mode are fixed, and the same binaries give the same
// digest.
//
//	image build -layout DIR -archive FILE -version V -revision R -created T \
//	    linux/amd64=PATH linux/arm64=PATH
//	image push -layout DIR -ref REGISTRY/REPOSITORY:TAG
package main

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// In the image: the Dockerfile's last stage says the same.
const (
	binaryPath = "monocle-hook" // /monocle-hook, relative as in a layer
	user       = "65532:65532"
	port       = "8080/tcp"
)

// imageSpec is everything an image is made from: the same spec gives the
// same bytes.
type imageSpec struct {
	version  string    // the chart's appVersion: the tag and the version label
	revision string    // the git commit
	created  time.Time // the commit's time
	source   string
	// binaries by platform ("linux/amd64"): the static monocle-hook.
	binaries map[string][]byte
}

func (s imageSpec) labels() map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "monocle-hook",
		"org.opencontainers.image.description": "Metacontroller sync hook that runs Monocle on Kubernetes",
		"org.opencontainers.image.source":      s.source,
		"org.opencontainers.image.url":         s.source,
		"org.opencontainers.image.licenses":    "Apache-2.0",
		"org.opencontainers.image.version":     s.version,
		"org.opencontainers.image.revision":    s.revision,
		"org.opencontainers.image.created":     s.created.UTC().Format(time.RFC3339),
	}
}

// buildIndex makes the image index: one image per platform, in the order of
// platforms (sorted by the caller, so the index is deterministic).
func buildIndex(s imageSpec, platforms []string) (v1.ImageIndex, error) {
	var adds []mutate.IndexAddendum
	for _, p := range platforms {
		platform, err := v1.ParsePlatform(p)
		if err != nil {
			return nil, err
		}
		img, err := buildImage(s, *platform, s.binaries[p])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		adds = append(adds, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: platform},
		})
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	idx = mutate.AppendManifests(idx, adds...)
	// The labels as annotations too: registries show an index's annotations.
	return mutate.Annotations(idx, s.labels()).(v1.ImageIndex), nil
}

func buildImage(s imageSpec, platform v1.Platform, binary []byte) (v1.Image, error) {
	if len(binary) == 0 {
		return nil, errors.New("no binary")
	}
	layerTar, err := binaryLayer(binary, s.created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   v1.Time{Time: s.created},
			CreatedBy: "COPY monocle-hook /monocle-hook # tools/image",
			Comment:   "the static monocle-hook binary",
		},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Architecture = platform.Architecture
	cf.OS = platform.OS
	cf.Variant = platform.Variant
	cf.Created = v1.Time{Time: s.created}
	cf.Config = v1.Config{
		User:         user,
		Entrypoint:   []string{"/" + binaryPath},
		WorkingDir:   "/",
		ExposedPorts: map[string]struct{}{port: {}},
		Labels:       s.labels(),
	}
	return mutate.ConfigFile(img, cf)
}

// binaryLayer is the layer's tar: the one file, owned by root and not
// writable by the hook's user, dated with the commit.
func binaryLayer(binary []byte, created time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{
		Typeflag: tar.TypeReg,
		Name:     binaryPath,
		Mode:     0o755,
		Size:     int64(len(binary)),
		ModTime:  created.UTC().Truncate(time.Second),
		Format:   tar.FormatUSTAR,
	}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(binary); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeLayout writes idx as an OCI image layout in dir (emptied first),
// tagged with the version.
func writeLayout(dir string, idx v1.ImageIndex, tag string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": tag,
	}))
}

// writeArchive tars dir (an OCI layout) into file: an oci-archive that
// skopeo, podman, crane and containerd read. Sorted entries, fixed owners,
// modes and times: the same layout gives the same bytes.
func writeArchive(file, dir string, mtime time.Time) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error { // lexical order
		if err != nil || path == dir {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.ToSlash(rel), ModTime: mtime.UTC().Truncate(time.Second), Format: tar.FormatUSTAR}
		if d.IsDir() {
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, h.Name+"/", 0o755
			return tw.WriteHeader(h)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		h.Typeflag, h.Mode, h.Size = tar.TypeReg, 0o644, int64(len(data))
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return os.WriteFile(file, buf.Bytes(), 0o644)
}

// layoutIndex is the image index a layout written by writeLayout holds.
func layoutIndex(dir string) (v1.ImageIndex, error) {
	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, err
	}
	m, err := top.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(m.Manifests) != 1 {
		return nil, fmt.Errorf("%s holds %d manifests, want the one index `image build` writes", dir, len(m.Manifests))
	}
	return top.ImageIndex(m.Manifests[0].Digest)
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: image build|push [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "build":
		err = build(os.Args[2:])
	case "push":
		err = push(context.Background(), os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: want build or push", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func build(args []string) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	dir := fs.String("layout", "", "write the OCI image layout to this folder (emptied first)")
	archive := fs.String("archive", "", "and tar it into this file (optional)")
	var s imageSpec
	fs.StringVar(&s.version, "version", "", "the version: the layout's tag and the version label")
	fs.StringVar(&s.revision, "revision", "", "the git commit")
	created := fs.String("created", "", "the commit's time (RFC 3339): every timestamp in the image")
	fs.StringVar(&s.source, "source", "https://github.com/change-metrics/monocle-hook", "the source repository's URL")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || s.version == "" || s.revision == "" || *created == "" || fs.NArg() == 0 {
		return errors.New("build needs -layout, -version, -revision, -created and at least one os/arch=binary")
	}
	var err error
	if s.created, err = time.Parse(time.RFC3339, *created); err != nil {
		return fmt.Errorf("-created: %w", err)
	}
	s.binaries = map[string][]byte{}
	var platforms []string
	for _, arg := range fs.Args() {
		platform, path, ok := strings.Cut(arg, "=")
		if !ok {
			return fmt.Errorf("%q: want os/arch=binary", arg)
		}
		if s.binaries[platform], err = os.ReadFile(path); err != nil {
			return err
		}
		platforms = append(platforms, platform)
	}
	// Sorted, so the order of the arguments does not change the digest.
	slices.Sort(platforms)
	idx, err := buildIndex(s, platforms)
	if err != nil {
		return err
	}
	if err := writeLayout(*dir, idx, s.version); err != nil {
		return err
	}
	if *archive != "" {
		if err := writeArchive(*archive, *dir, s.created); err != nil {
			return err
		}
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Println(digest)
	return nil
}

func push(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("push", flag.ContinueOnError)
	dir := fs.String("layout", "", "the OCI image layout `image build` wrote")
	to := fs.String("ref", "", "where to push: REGISTRY/REPOSITORY:TAG (loopback and private addresses are spoken to over plain HTTP)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *to == "" {
		return errors.New("push needs -layout and -ref")
	}
	ref, err := name.NewTag(*to)
	if err != nil {
		return err
	}
	idx, err := layoutIndex(*dir)
	if err != nil {
		return err
	}
	if err := remote.WriteIndex(ref, idx, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s@%s\n", ref.Name(), digest)
	return nil
}
