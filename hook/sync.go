package hook

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/change-metrics/monocle-hook/hook/access"
	"github.com/change-metrics/monocle-hook/hook/applied"
	"github.com/change-metrics/monocle-hook/hook/child"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/elastic"
	"github.com/change-metrics/monocle-hook/hook/pods"
	"github.com/change-metrics/monocle-hook/hook/wire"
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
func Sync(req *wire.SyncRequest, env Env) (*wire.SyncResponse, error) {
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
	namespace := req.Parent.Metadata.Namespace
	obs := wire.Observe(req.Children, namespace)

	s, specErr := resolveSpec(req.Parent.Spec)
	if errs := validation.IsDNS1035Label(n.Instance); len(errs) > 0 || len(n.Instance) > MaxNameLength {
		// The CRD's rule rejects such names; this guards objects made
		// without it, whose children could not be named.
		specErr = condition.Invalid("", "metadata.name %s must be a DNS-1035 label of at most %d characters", condition.Quote(n.Instance), MaxNameLength)
	}
	var resp *wire.SyncResponse
	if specErr != nil {
		children, err := applied.Children(env.Context, obs.All())
		if err != nil {
			return nil, err
		}
		resp = &wire.SyncResponse{Children: children}
		// The spec cannot say: what runs says.
		resp.Status = makeStatus(req.Parent, n, obs, env.Now, statusFacts{
			elastic: elastic.HeldFacts(n, obs),
			pods:    pods.HeldFacts(n, obs),
			errors:  []*condition.FieldError{specErr},
			invalid: specErr,
		})
	} else {
		if note := requestSizeNote(req.Size, n, obs); note != "" {
			s.notes = append(s.notes, note)
		}
		var err error
		if resp, err = desired(req.Parent, n, s, obs, req.Related.In(namespace), env); err != nil {
			return nil, err
		}
	}
	if err := checkBoundary(resp.Children, namespace, n, obs); err != nil {
		return nil, err
	}
	// Without a finalize hook this is never asked; with one left over (the
	// recorded parents carry its finalizer), the Monocle must not hang in
	// deletion: its children go with it through their ownerReferences.
	resp.Finalized = req.Finalizing
	return resp, nil
}

// desired is the answer for a spec that decodes and checks, composed of
// the parts' typed bundles in the answer's order: the pods' Secret,
// Elasticsearch's children, the API's Service and Ingress, Elasticsearch's
// NetworkPolicy, then the rest of the pods'. A part of it the hook cannot
// honour (a config Monocle would refuse, a missing object, a volume that
// must be grown by hand) is a condition, and holds only the children it
// concerns.
func desired(parent *wire.Parent, n instance.Names, s settings, obs wire.Children, rel wire.Related, env Env) (*wire.SyncResponse, error) {
	namespace := parent.Metadata.Namespace
	// Each part draws from its own stream: the order they run in moves
	// no key.
	streams := child.NewStreams(env.Rand)
	users, err := elastic.Users(n, s.elastic, obs, streams.Stream(child.ComponentElastic))
	if err != nil {
		return nil, err
	}
	if err := env.done(); err != nil {
		return nil, err
	}
	p, podFacts, err := pods.Answer(env.Context, namespace, n, s.pods, obs, rel, streams.Stream(child.ComponentAPI), pods.Given{
		PublicURL:  s.access.PublicURL,
		ElasticURL: s.elastic.URL, ElasticURLSecret: s.elastic.URLSecret, ElasticUsers: users,
		ProxyImage: cmp.Or(env.Image, elastic.DefaultHookImage),
	})
	if err != nil {
		return nil, err
	}
	// Elasticsearch's security waits for the pods' clients to read their
	// credentials.
	es, esFacts, err := elastic.Answer(namespace, n, s.elastic, obs, rel.Claims, users, env.Image, podFacts.ElasticClientPending)
	if err != nil {
		return nil, err
	}
	// The Service's affinity is what the pods' part says of the sessions.
	api, accessNotes := access.Answer(n, s.access, obs, podFacts.Sessions)
	children := add(nil, p.Secret)
	children = add(children, es.Users)
	children = add(children, es.Service)
	children = add(children, es.StatefulSet)
	children = add(children, es.Snapshots)
	children = add(children, api.Service)
	children = add(children, api.Ingress)
	children = add(children, es.NetworkPolicy)
	children = add(children, p.DisruptionBudget)
	children = add(children, p.Config)
	children = add(children, p.Mounted)
	children = add(children, p.API)
	children = append(children, p.Earlier...)
	children = add(children, p.Crawler)
	children = append(children, p.Held...)
	children = add(children, p.Job)
	facts := statusFacts{elastic: esFacts, pods: podFacts, notes: s.notes, accessNotes: accessNotes}
	return &wire.SyncResponse{Children: children, Status: makeStatus(parent, n, obs, env.Now, facts)}, nil
}

// add appends obj to children unless it is nil: a part's child it does not
// answer.
func add[T any](children []wire.Child, obj *T) []wire.Child {
	if obj == nil {
		return children
	}
	return append(children, obj)
}

// requestSizeNote warns, once a sync request is over half the hook's body
// limit, how close the Monocle is to the point where it can no longer be
// synced, and why: nearly all of a large request is config text (each
// ConfigMap holds it twice, with Metacontroller's last-applied copy).
func requestSizeNote(size int, n instance.Names, obs wire.Children) string {
	if size <= wire.MaxBodyBytes/2 {
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
		size>>10, 100*size/wire.MaxBodyBytes, wire.MaxBodyBytes>>10, configs, n.API, n.MountedConfigPrefix())
}
