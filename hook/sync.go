package hook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/change-metrics/monocle-hook/internal/instance"
)

// Env is all the hook depends on beyond the request: tests fix it.
type Env struct {
	Now  func() time.Time
	Rand io.Reader
	// Image is the hook's own image, which the snapshot CronJobs run
	// (`monocle-hook snapshot`): main's --image. Empty: DefaultHookImage.
	Image string
	// Context is the request's: once it is done (the client has gone),
	// Sync stops at its next step and returns its error. Nil: never done.
	Context context.Context
}

// done is the Context's error, if any: work for a client that has gone is
// work no one reads.
func (e Env) done() error {
	if e.Context == nil {
		return nil
	}
	return e.Context.Err()
}

// ErrBadRequest marks a request that is not a sync request at all.
var ErrBadRequest = errors.New("bad sync request")

// Sync computes the desired children and the status of one Monocle. It does
// no I/O: the same request and Env give the same answer, byte for byte.
// An error means the request itself is unusable (ErrBadRequest) or the
// random source failed; a spec the hook cannot honour is not an error but a
// condition, with the children it concerns answered as they were last
// applied (every child, for an InvalidSpec).
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
	n := instance.For(req.Parent.Metadata.Name)
	obs := observe(req.Children)

	s, specErr := resolveSpec(req.Parent.Spec)
	if errs := validation.IsDNS1035Label(n.Instance); len(errs) > 0 || len(n.Instance) > MaxNameLength {
		// The CRD's rule rejects such names; this guards objects made
		// without it, whose children could not be named.
		specErr = invalid("", "metadata.name %s must be a DNS-1035 label of at most %d characters", quote(n.Instance), MaxNameLength)
	}
	var resp *SyncResponse
	if specErr != nil {
		children, err := lastApplied(env, obs.all())
		if err != nil {
			return nil, err
		}
		resp = &SyncResponse{Children: children}
		resp.Status = makeStatus(req.Parent, n, obs, env.Now, statusInput{
			url:        observedPublicURL(obs.Deployments[n.API]),
			specErrors: []*fieldError{specErr},
			// The spec cannot say: what runs says.
			crawler:             obs.Deployments[n.Crawler] != nil,
			external:            obs.StatefulSets[n.Elastic] == nil && obs.Deployments[n.API] != nil,
			snapshotsOff:        reasonSpecNotApplied,
			snapshotsOffMessage: "the spec is not applied",
			snapshotsClaim:      snapshotsClaimOf(n, obs.StatefulSets[n.Elastic]),
		})
	} else {
		if note := requestSizeNote(req.Size, n, obs); note != "" {
			s.notes = append(s.notes, note)
		}
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

// desired is the answer for a spec that decodes and checks. A part of it
// the hook cannot honour (a config Monocle would refuse, a missing object,
// a volume that must be grown by hand) is a condition, and holds only the
// children it concerns.
func desired(parent *Parent, n instance.Names, s settings, obs Children, rel Related, env Env) (*SyncResponse, error) {
	var observedSecret map[string][]byte
	if sec := obs.Secrets[n.API]; sec != nil {
		observedSecret = sec.Data
	}
	secret, err := secretData(observedSecret, env.Rand)
	if err != nil {
		return nil, err
	}
	generated := configData(obs.ConfigMaps[n.API], s.config)
	in := statusInput{url: s.publicURL, external: s.elastic.external(), crawler: s.crawler, notes: s.notes}

	children := []Child{makeSecret(n, secret)}
	claims := byName(rel.Claims)
	children = append(children, elasticChildren(parent.Metadata.Namespace, n, s, obs, claims, env, &in)...)
	in.claims = claims
	// Its affinity depends on the config, read below.
	apiService := makeService(n, n.API, componentAPI, instance.APIPort)
	children = append(children, apiService)
	if s.ingress != nil {
		children = append(children, makeIngress(n, s.ingress))
	}

	// What the Monocle pods read: the Secrets in their environment and the
	// config they mount. Either refused, and the pods (with their config and
	// the update-idents Jobs) stay exactly as they are.
	if err := env.done(); err != nil {
		return nil, err
	}
	envData, hashed, missing, hold := podSecrets(s, secret, rel)
	in.specErrors = append(in.specErrors, missing...)
	var cfg validConfig
	if hold == nil {
		var text string
		if text, hold = configSource(n, s, generated, rel); hold == nil {
			cfg, hold = validateConfig(n, s, text, envHas(envData))
		}
	}
	if hold != nil {
		// First: the reason of SpecApplied, which render and the metric read.
		in.specErrors = append([]*fieldError{hold}, in.specErrors...)
		in.configError = hold
		// The pods are held: the status says what they run.
		in.url, in.crawler = observedPublicURL(obs.Deployments[n.API]), s.crawler || obs.Deployments[n.Crawler] != nil
		if svc := obs.Services[n.API]; svc != nil && svc.Spec.SessionAffinity == corev1.ServiceAffinityClientIP {
			clientIPAffinity(apiService) // as the API's config wants it
		}
		held, err := lastApplied(env, heldByPods(n, obs))
		if err != nil {
			return nil, err
		}
		if obs.ConfigMaps[n.API] == nil {
			// Nothing mounts it: it is the place to edit the config.
			children = append(children, makeConfigMap(n, generated))
		}
		children = append(children, held...)
		return &SyncResponse{Children: children, Status: makeStatus(parent, n, obs, env.Now, in)}, nil
	}

	// What the config reads once running, which the loader does not check:
	// a workload that would break on it keeps what it runs.
	ns := parent.Metadata.Namespace
	api, crawler := obs.Deployments[n.API], obs.Deployments[n.Crawler]
	var crawlerHold, keyHold *fieldError
	var tokenNotes []string
	if len(missing) == 0 {
		// Not while a Secret the pods read is missing: they cannot start
		// (ReferenceNotFound), and what it holds is not known.
		crawlerHold, tokenNotes = missingTokens(ns, n, s, cfg.tokens, crawler != nil)
		// The key signs only OIDC logins and admin tokens: otherwise a
		// short one is a note, and holds nothing.
		signs := cfg.oidc || envHas(envData)("MONOCLE_ADMIN_TOKEN")
		var keyNote string
		keyHold, keyNote = loginKey(ns, n, s, secret, rel, api != nil, signs)
		if keyNote != "" {
			tokenNotes = append(tokenNotes, keyNote)
		}
	}
	for _, h := range []*fieldError{crawlerHold, keyHold} {
		if h != nil {
			in.specErrors = append(in.specErrors, h)
		}
	}
	in.notes = append(in.notes, tokenNotes...)
	for _, w := range cfg.warnings {
		in.notes = append(in.notes, w.String())
	}
	if stickyLogins(s, cfg.oidc) {
		clientIPAffinity(apiService)
		if note := ingressAffinityNote(s); note != "" {
			in.notes = append(in.notes, note)
		}
	}

	mounted := n.MountedConfig(cfg.hash)
	r := rollout{config: mounted, secretHash: hashSecrets(hashed)}
	children = append(children,
		makeConfigMap(n, generated),
		makeMountedConfigMap(n, cfg))
	var held []observedChild // the workloads kept as they run
	apiHeld := keyHold != nil && api != nil
	if apiHeld {
		held = append(held, observedChild{api, typeDeployment})
	} else {
		children = append(children, makeAPIDeployment(n, s, r))
	}
	// Earlier mounted configs stay while pods may still mount them.
	earlier, err := lastApplied(env, stillMounted(n, obs, mounted))
	if err != nil {
		return nil, err
	}
	children = append(children, earlier...)
	// A held API holds the crawler too: it would push to an API that runs
	// another config (unknown crawlers, another crawlers_api_key).
	if s.crawler && crawlerHold == nil && !apiHeld {
		children = append(children, makeCrawlerDeployment(n, s, r, crawler))
	} else if s.crawler && crawler != nil {
		held = append(held, observedChild{crawler, typeDeployment})
	}
	if len(held) > 0 {
		kept, err := lastApplied(env, held)
		if err != nil {
			return nil, err
		}
		children = append(children, kept...)
	}
	// The Job runs once per idents: first answered once the API runs this
	// config (the API creates the workspace indices the janitor needs),
	// then for as long as the idents are unchanged, whatever the API does.
	// A Job for older idents is left out: deleted.
	job := obs.Jobs[n.UpdateIdentsJob(cfg.idents)]
	if job != nil || apiRuns(obs.Deployments[n.API], mounted) {
		children = append(children, makeUpdateIdentsJob(n, s, cfg.idents, mounted, job))
	}
	in.job, in.jobName = job, n.UpdateIdentsJob(cfg.idents)
	return &SyncResponse{Children: children, Status: makeStatus(parent, n, obs, env.Now, in)}, nil
}

// requestSizeNote warns, once a sync request is over half the hook's body
// limit, how close the Monocle is to the point where it can no longer be
// synced, and why: nearly all of a large request is config text (each
// ConfigMap holds it twice, with Metacontroller's last-applied copy).
func requestSizeNote(size int, n instance.Names, obs Children) string {
	if size <= MaxBodyBytes/2 {
		return ""
	}
	configs := 0
	for name := range obs.ConfigMaps {
		if strings.HasPrefix(name, n.MountedConfigPrefix()) || name == n.API {
			configs++
		}
	}
	return fmt.Sprintf("the sync request is %d KiB, %d%% of the %d KiB the hook accepts: mostly config text, in %d ConfigMaps of this Monocle "+
		"(%s and the mounted %s*, each with Metacontroller's last-applied copy); a smaller config or fewer quick edits keep it syncable",
		size>>10, 100*size/MaxBodyBytes, MaxBodyBytes>>10, configs, n.API, n.MountedConfigPrefix())
}
