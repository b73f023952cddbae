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
	networkingv1 "k8s.io/api/networking/v1"
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
	ingresses    map[string]*networkingv1.Ingress
}

func observe(c Children) observed {
	return observed{
		secrets:      byName(c.Secrets),
		configMaps:   byName(c.ConfigMaps),
		services:     byName(c.Services),
		statefulSets: byName(c.StatefulSets),
		deployments:  byName(c.Deployments),
		jobs:         byName(c.Jobs),
		ingresses:    byName(c.Ingresses),
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
			url:        observedPublicURL(obs.deployments[n.api]),
			specErrors: []*fieldError{specErr},
			// The spec cannot say: what runs says.
			crawler:  obs.deployments[n.crawler] != nil,
			external: obs.statefulSets[n.elastic] == nil && obs.deployments[n.api] != nil,
		})
	} else {
		var err error
		if resp, err = desired(req.Parent, n, s, obs, req.Related, env); err != nil {
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
func desired(parent *Parent, n names, s settings, obs observed, rel Related, env Env) (*SyncResponse, error) {
	secretData, err := secretData(obs.secrets[n.api], env.Rand)
	if err != nil {
		return nil, err
	}
	configData := configData(obs.configMaps[n.api], s.config)
	in := statusInput{url: s.publicURL, external: s.elastic.external(), crawler: s.crawler}

	// What the pods read: the config they mount, the Secrets in their
	// environment. A change to any of them rolls the pods.
	mounted, secrets, refErrs := referenced(s, configData, secretData, rel)
	in.specErrors = append(in.specErrors, refErrs...)
	r := rollout{configHash: hashData(mounted), secretHash: hashSecrets(secrets)}

	children := []Child{makeSecret(n, secretData), makeConfigMap(n, configData)}
	sts := obs.statefulSets[n.elastic]
	switch {
	case !s.elastic.external():
		children = append(children,
			makeService(n, n.elastic, componentElastic, elasticPort),
			makeElasticStatefulSet(n, s, sts, false))
		claim := byName(rel.Claims)[n.dataClaim()]
		in.storage = storageStatus(n, s, sts, claim)
		if sts != nil {
			if e := storageChange(parent.Metadata.Namespace, n, s, sts, claim); e != nil {
				in.specErrors = append(in.specErrors, e)
			}
		}
	case sts != nil && !retained(sts):
		// Leaving managed Elasticsearch: its volume must be set to Retain
		// before the StatefulSet goes, whatever deleteDataOnDelete says.
		children = append(children, makeElasticStatefulSet(n, s, sts, true))
		in.retaining = true
	}
	children = append(children, makeService(n, n.api, componentAPI, apiPort), makeAPIDeployment(n, s, r))
	if s.crawler {
		children = append(children, makeCrawlerDeployment(n, s, r))
	}
	if s.ingress != nil {
		children = append(children, makeIngress(n, s.ingress))
	}

	hash, configErr := identsHash(mounted[configFile])
	if _, ok := mounted[configFile]; !ok {
		configErr = fmt.Errorf("the config has no %s", configFile)
	}
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
		// The Job is first answered once Elasticsearch is ready (an external
		// one is taken as ready), then for as long as the idents are
		// unchanged, whatever Elasticsearch does: so it runs once per
		// idents. A Job for older idents is left out: deleted.
		job := obs.jobs[n.updateIdentsJob(hash)]
		if job != nil || s.elastic.external() || statefulSetReady(sts) {
			children = append(children, makeUpdateIdentsJob(n, s, hash, job))
		}
		in.job, in.jobName = job, n.updateIdentsJob(hash)
	}

	return &SyncResponse{
		Children: children,
		Status:   makeStatus(parent, n, obs, env.Now, in),
	}, nil
}

// referenced gathers what the pods read: the config files they mount (the
// user's ConfigMap when the spec names one, else the generated one) and the
// data of every Secret in their environment, in envFrom order. A named
// object that is not there is reported; the pods wait for it.
func referenced(s settings, configData map[string]string, secretData map[string][]byte, rel Related) (map[string]string, []map[string][]byte, []*fieldError) {
	var errs []*fieldError
	mounted := configData
	if s.configMap != "" {
		cm := byName(rel.ConfigMaps)[s.configMap]
		if cm == nil {
			errs = append(errs, &fieldError{"ReferenceNotFound", "configMapRef.name", fmt.Sprintf("names ConfigMap %q, which does not exist", s.configMap)})
			mounted = map[string]string{}
		} else {
			mounted = cm.Data
		}
	}
	secrets := []map[string][]byte{secretData}
	relSecrets := byName(rel.Secrets)
	if s.secret != "" {
		if sec := relSecrets[s.secret]; sec == nil {
			errs = append(errs, &fieldError{"ReferenceNotFound", "secretRef.name", fmt.Sprintf("names Secret %q, which does not exist", s.secret)})
		} else {
			secrets = append(secrets, sec.Data)
		}
	}
	if ref := s.elastic.urlSecret; ref != nil {
		sec := relSecrets[ref.Name]
		if sec == nil || sec.Data[ref.Key] == nil {
			errs = append(errs, &fieldError{"ReferenceNotFound", "elasticsearch.urlSecretRef", fmt.Sprintf("names key %q of Secret %q, which does not exist", ref.Key, ref.Name)})
		} else {
			secrets = append(secrets, map[string][]byte{ref.Key: sec.Data[ref.Key]})
		}
	}
	return mounted, secrets, errs
}

func hashSecrets(secrets []map[string][]byte) string {
	if len(secrets) == 1 {
		return hashData(secrets[0])
	}
	combined := map[string]string{}
	for i, data := range secrets {
		combined[fmt.Sprint(i)] = hashData(data)
	}
	return hashData(combined)
}

func retained(sts *appsv1.StatefulSet) bool {
	p := sts.Spec.PersistentVolumeClaimRetentionPolicy
	return p == nil || p.WhenDeleted != appsv1.DeletePersistentVolumeClaimRetentionPolicyType
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
// with the spec's inline config.yaml, if any, over it, and the default one
// when there is neither.
func configData(observed *corev1.ConfigMap, inline string) map[string]string {
	data := map[string]string{}
	if observed != nil {
		for k, v := range observed.Data {
			data[k] = v
		}
	}
	if inline != "" {
		data[configFile] = inline
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

// storageChange judges the size and class asked for Elasticsearch's volume
// against the volume. The StatefulSet's volumeClaimTemplates are immutable
// and are never touched: growth is the admin's one command on the claim
// (the StorageClass must allow expansion), shrinking and a class change are
// refused.
func storageChange(namespace string, n names, s settings, sts *appsv1.StatefulSet, claim *corev1.PersistentVolumeClaim) *fieldError {
	for _, t := range sts.Spec.VolumeClaimTemplates {
		if t.Name != "data" {
			continue
		}
		if class := deref(t.Spec.StorageClassName); s.elastic.class != "" && class != s.elastic.class {
			return &fieldError{"ImmutableField", s.elastic.classField, fmt.Sprintf("is %q but Elasticsearch's volume was created with %q, which cannot change: %q is kept", s.elastic.class, class, class)}
		}
		if !s.elastic.sizeAsked {
			return nil
		}
		current := t.Spec.Resources.Requests[corev1.ResourceStorage]
		if claim != nil {
			current = claim.Spec.Resources.Requests[corev1.ResourceStorage]
		}
		want := s.elastic.size
		switch current.Cmp(want) {
		case 1:
			return &fieldError{"StorageShrinkRefused", s.elastic.sizeField, fmt.Sprintf("is %s but volume %s has %s: a volume cannot shrink, %s is kept", want.String(), n.dataClaim(), current.String(), current.String())}
		case -1:
			return &fieldError{"VolumeExpansionRequired", s.elastic.sizeField, fmt.Sprintf(
				"is %s but volume %s has %s. To grow it (its StorageClass must allow volume expansion), run: kubectl -n %s patch pvc %s --type merge -p '{\"spec\":{\"resources\":{\"requests\":{\"storage\":\"%s\"}}}}'",
				want.String(), n.dataClaim(), current.String(), namespace, n.dataClaim(), want.String())}
		}
	}
	return nil
}

// storageStatus reports the size asked and the volume's capacity.
func storageStatus(n names, s settings, sts *appsv1.StatefulSet, claim *corev1.PersistentVolumeClaim) *StorageStatus {
	st := &StorageStatus{Claim: n.dataClaim(), Requested: s.elastic.size.String()}
	if !s.elastic.sizeAsked && sts != nil {
		for _, t := range sts.Spec.VolumeClaimTemplates {
			if t.Name == "data" {
				q := t.Spec.Resources.Requests[corev1.ResourceStorage]
				st.Requested = q.String()
			}
		}
	}
	if claim != nil {
		if c, ok := claim.Status.Capacity[corev1.ResourceStorage]; ok {
			st.Capacity = c.String()
		}
	}
	return st
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
