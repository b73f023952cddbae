package hook

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Env is all the hook depends on beyond the request: tests fix both.
type Env struct {
	Now  func() time.Time
	Rand io.Reader
}

// ErrBadRequest marks a request that is not a sync request at all.
var ErrBadRequest = errors.New("bad sync request")

// observed holds the observed children by name.
type observed struct {
	secrets      map[string]*corev1.Secret
	configMaps   map[string]*corev1.ConfigMap
	services     map[string]*corev1.Service
	statefulSets map[string]*appsv1.StatefulSet
	deployments  map[string]*appsv1.Deployment
	jobs         map[string]*batchv1.Job
}

func observe(c Children) observed {
	return observed{
		secrets:      byName(c.Secrets),
		configMaps:   byName(c.ConfigMaps),
		services:     byName(c.Services),
		statefulSets: byName(c.StatefulSets),
		deployments:  byName(c.Deployments),
		jobs:         byName(c.Jobs),
	}
}

// Sync computes the desired children and the status of one Monocle. It does
// no I/O: the same request and Env give the same answer, byte for byte.
// An error means the request itself is unusable (ErrBadRequest) or the
// random source failed; a spec the hook cannot honour is not an error but a
// condition, with every observed child answered as it was last applied.
func Sync(req *SyncRequest, env Env) (*SyncResponse, error) {
	if req == nil || req.Parent == nil {
		return nil, fmt.Errorf("%w: no parent", ErrBadRequest)
	}
	if req.Parent.Metadata.Name == "" {
		return nil, fmt.Errorf("%w: the parent has no metadata.name", ErrBadRequest)
	}
	if req.Parent.Kind != "" && req.Parent.Kind != Kind {
		return nil, fmt.Errorf("%w: the parent is a %s, not a %s", ErrBadRequest, req.Parent.Kind, Kind)
	}
	n := namesFor(req.Parent.Metadata.Name)
	obs := observe(req.Children)

	s, specErr := resolveSpec(req.Parent.Spec)
	if errs := validation.IsDNS1035Label(n.instance); len(errs) > 0 || len(n.instance) > MaxNameLength {
		// The CRD's rule rejects such names; this guards objects made
		// without it, whose children could not be named.
		specErr = &fieldError{"InvalidSpec", "", fmt.Sprintf("metadata.name %q must be a DNS-1035 label of at most %d characters", n.instance, MaxNameLength)}
	}
	var resp *SyncResponse
	if specErr != nil {
		children, err := lastApplied(obs)
		if err != nil {
			return nil, err
		}
		resp = &SyncResponse{Children: children}
		resp.Status = makeStatus(req.Parent, n, obs, env.Now, statusInput{
			url:       observedPublicURL(obs.deployments[n.api]),
			specError: specErr,
		})
	} else {
		var err error
		if resp, err = desired(req.Parent, n, s, obs, env); err != nil {
			return nil, err
		}
	}
	// Without a finalize hook this is never asked; with one left over (the
	// recorded parents carry its finalizer), the Monocle must not hang in
	// deletion: its children go with it through their ownerReferences.
	resp.Finalized = req.Finalizing
	return resp, nil
}

// desired is the full answer for a valid spec.
func desired(parent *Parent, n names, s settings, obs observed, env Env) (*SyncResponse, error) {
	secretData, err := secretData(obs.secrets[n.api], env.Rand)
	if err != nil {
		return nil, err
	}
	configData := configData(obs.configMaps[n.api])
	r := rollout{configHash: hashData(configData), secretHash: hashData(secretData)}

	sts := obs.statefulSets[n.elastic]
	in := statusInput{url: s.publicURL}
	if sts != nil {
		in.specError = storageChange(sts, s)
	}

	children := []Child{
		makeSecret(n, secretData),
		makeConfigMap(n, configData),
		makeService(n, n.elastic, componentElastic, elasticPort),
		makeElasticStatefulSet(n, s, sts),
		makeService(n, n.api, componentAPI, apiPort),
		makeAPIDeployment(n, s, r),
		makeCrawlerDeployment(n, s, r),
	}

	hash, configErr := identsHash(configData[configFile])
	if configErr != nil {
		// Without idents there is no Job to name: keep the Jobs there are,
		// as they are, until the config is fixed.
		in.configError = configErr
		for _, name := range sortedKeys(obs.jobs) {
			if strings.HasPrefix(name, n.updateIdentsPrefix()) {
				children = append(children, makeUpdateIdentsJob(n, s, strings.TrimPrefix(name, n.updateIdentsPrefix()), obs.jobs[name]))
			}
		}
	} else {
		// The Job is first answered once Elasticsearch is ready, then for as
		// long as the idents are unchanged, whatever Elasticsearch does: so it
		// runs once per idents. A Job for older idents is left out: deleted.
		job := obs.jobs[n.updateIdentsJob(hash)]
		if job != nil || statefulSetReady(sts) {
			children = append(children, makeUpdateIdentsJob(n, s, hash, job))
		}
		in.job, in.jobName = job, n.updateIdentsJob(hash)
	}

	return &SyncResponse{
		Children: children,
		Status:   makeStatus(parent, n, obs, env.Now, in),
	}, nil
}

// secretData keeps every observed key (an admin's provider tokens too) and
// generates the crawlers' API key once, when it is missing.
func secretData(observed *corev1.Secret, random io.Reader) (map[string][]byte, error) {
	data := map[string][]byte{}
	if observed != nil {
		for k, v := range observed.Data {
			data[k] = v
		}
	}
	if len(data[apiKeyName]) == 0 {
		key, err := randomKey(random, 32)
		if err != nil {
			return nil, fmt.Errorf("generating %s: %w", apiKeyName, err)
		}
		data[apiKeyName] = key
	}
	return data, nil
}

// configData keeps the observed config (an admin's edits are the config),
// with the default config.yaml when there is none.
func configData(observed *corev1.ConfigMap) map[string]string {
	data := map[string]string{}
	if observed != nil {
		for k, v := range observed.Data {
			data[k] = v
		}
	}
	if _, ok := data[configFile]; !ok {
		data[configFile] = defaultConfig
	}
	return data
}

const keyAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// randomKey draws n characters from keyAlphabet without modulo bias.
func randomKey(random io.Reader, n int) ([]byte, error) {
	key := make([]byte, 0, n)
	buf := make([]byte, 2*n)
	for len(key) < n {
		if _, err := io.ReadFull(random, buf); err != nil {
			return nil, err
		}
		for _, b := range buf {
			// 248 is the largest multiple of 62 below 256.
			if b < 248 && len(key) < n {
				key = append(key, keyAlphabet[int(b)%len(keyAlphabet)])
			}
		}
	}
	return key, nil
}

// storageChange reports a spec asking for storage other than the
// StatefulSet's volumeClaimTemplates hold: they are immutable, so the hook
// keeps them and says so.
func storageChange(sts *appsv1.StatefulSet, s settings) *fieldError {
	for _, claim := range sts.Spec.VolumeClaimTemplates {
		if claim.Name != "data" {
			continue
		}
		if size := claim.Spec.Resources.Requests[corev1.ResourceStorage]; s.sizeAsked && size.Cmp(s.storageSize) != 0 {
			return &fieldError{"ImmutableField", "storageSize", fmt.Sprintf("is %s but Elasticsearch's volume was created with %s, which cannot change: %s is kept", s.storageSize.String(), size.String(), size.String())}
		}
		if class := deref(claim.Spec.StorageClassName); s.storageClass != "" && class != s.storageClass {
			return &fieldError{"ImmutableField", "storageClassName", fmt.Sprintf("is %q but Elasticsearch's volume was created with %q, which cannot change: %q is kept", s.storageClass, class, class)}
		}
	}
	return nil
}

// observedPublicURL is the public URL the API runs with.
func observedPublicURL(d *appsv1.Deployment) string {
	if d == nil {
		return ""
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == "MONOCLE_PUBLIC_URL" {
				return e.Value
			}
		}
	}
	return ""
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
