// Package pods is the part of a Monocle that runs its workloads: the API
// and the crawler Deployments, their ConfigMaps (the generated N-api, the
// mounted N-config-<hash>, config.go), the Secrets they read (the generated
// N-api, secrets.go; the spec's secretRef), what Monocle reads only once
// running (oncerunning.go, environment.go), the update-idents Job and the
// API's PodDisruptionBudget. Resolve reads its section of the spec; Keys
// draws the generated Secret's keys; Answer gives its children (a typed
// bundle) and its Facts from what it observes; HeldFacts are its facts when
// every child is held as last applied; IdentsUpdated is its condition.
package pods

import (
	"cmp"
	"context"
	"io"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-hook/hook/applied"
	"github.com/change-metrics/monocle-hook/hook/child"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/elasticusers"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// Facts are what the status says of the Monocle pods (the API, the
// crawler, the update-idents Job), learned while answering them.
type Facts struct {
	URL string // the public URL the API runs with
	// API and Crawler are the status's components: how they run, and the
	// refusal that holds each as it runs (answered as last applied) or
	// withholds it (not made), set exactly when Answer does so, for the
	// status says "held" of these alone. The crawler is Disabled when the
	// spec turns it off (and, held as it runs, none runs).
	API, Crawler condition.Component
	// ConfigError, when not nil, holds the pods and their config as they
	// are: it is the first reason of SpecApplied, which render and the
	// invalid_spec metric read.
	ConfigError *condition.FieldError
	// Errors are the rest of what is not applied: a missing Secret, a
	// workload held by what it would read once running.
	Errors []*condition.FieldError
	Notes  []string
	// The update-idents Job of the current idents, if observed, and its
	// name ("" when the idents are unknown).
	job     *batchv1.Job
	jobName string
	// Sessions are what the API's Service keeps to (hook/access).
	Sessions condition.Sessions
	// ElasticClientPending names the pods' clients of the Elasticsearch
	// the Monocle runs that may still reach it without credentials
	// (elasticClientPending); "" when none may, or it is external.
	ElasticClientPending string
}

// Children are the pods' children in an answer, each nil (or empty) when
// it is not answered: the hook places them among the others, the Secret
// first, the disruption budget and the rest after Elasticsearch's and the
// access' children, in this order.
type Children struct {
	Secret           *corev1.Secret // N-api, the generated keys
	DisruptionBudget *policyv1.PodDisruptionBudget
	Config           *corev1.ConfigMap // N-api, the generated config
	Mounted          *corev1.ConfigMap // N-config-<hash>, the validated config
	API              *appsv1.Deployment
	// Earlier are the earlier mounted configs pods may still mount, as
	// last applied.
	Earlier []wire.Child
	Crawler *appsv1.Deployment
	// Held are the pods' children kept as last applied: the workloads a
	// refusal holds, or, while what the pods read is refused, every
	// workload, config and Job.
	Held []wire.Child
	Job  *batchv1.Job // update-idents
}

// Given is what the pods read of the other parts, which the hook passes
// on: the API's public URL (hook/access) and where Elasticsearch is
// (hook/elastic).
type Given struct {
	PublicURL string
	// ElasticURL or ElasticURLSecret, when set: Elasticsearch is external.
	ElasticURL       string
	ElasticURLSecret *corev1.SecretKeySelector
	// ElasticUsers is the data of the Secret N-elastic, Elasticsearch's
	// users, when the hook answers it: the API reads its URL there.
	ElasticUsers map[string][]byte
	// ProxyImage is the hook's own image, which runs the API's
	// Elasticsearch proxy (elasticproxy.go).
	ProxyImage string
}

// elasticExternal: Elasticsearch is another's.
func (g Given) elasticExternal() bool { return g.ElasticURL != "" || g.ElasticURLSecret != nil }

// HeldFacts are the pods' facts when every child is held as last applied
// (the spec cannot say: what runs says).
func HeldFacts(n instance.Names, obs wire.Children) Facts {
	api, crawler := components(n, obs, obs.Deployments[n.Crawler] != nil, nil, nil)
	return Facts{URL: observedPublicURL(obs.Deployments[n.API]), API: api, Crawler: crawler}
}

// components are the API's and the crawler's, each held by its block; the
// crawler is Disabled unless crawlerOn.
func components(n instance.Names, obs wire.Children, crawlerOn bool, apiBlock, crawlerBlock *condition.FieldError) (api, crawler condition.Component) {
	api = condition.DeploymentComponent(child.ComponentAPI, obs.Deployments[n.API])
	crawler = condition.DeploymentComponent(child.ComponentCrawler, obs.Deployments[n.Crawler])
	api.Block, crawler.Block = apiBlock, crawlerBlock
	if !crawlerOn {
		crawler.Off = "Disabled"
	}
	return api, crawler
}

// Answer gives the pods' children and facts: the generated Secret N-api of
// keys (its missing keys drawn from random), the API's disruption budget, the ConfigMaps of their config, the
// API's and the crawler's Deployments, the update-idents Job. What the pods
// read (the Secrets in their environment, the config they mount), refused,
// holds them, with their config and Jobs, exactly as they are. Their facts
// say which sessions the API's Service keeps to.
func Answer(ctx context.Context, namespace string, n instance.Names, s Settings, obs wire.Children, rel wire.Related,
	random io.Reader, given Given) (Children, Facts, error) {
	keys, err := secretData(obs.Secrets[n.API], random)
	if err != nil {
		return Children{}, Facts{}, err
	}
	out := Children{Secret: child.Secret(n, n.API, child.ComponentAPI, keys)}
	if s.APIReplicas > 1 {
		out.DisruptionBudget = makeAPIDisruptionBudget(n)
	}
	generated := configData(obs.ConfigMaps[n.API], s.config)
	envData, hashed, missing, hold := podSecrets(s, given, keys, rel)
	var cfg validConfig
	if hold == nil {
		var text string
		if text, hold = configSource(n, s, generated, rel); hold == nil {
			cfg, hold = validateConfig(n, s, text, envHas(envData))
		}
	}
	if hold != nil {
		return heldAnswer(ctx, n, s, obs, given, generated, hold, missing, out)
	}
	facts := Facts{URL: given.PublicURL, Errors: missing}
	api := obs.Deployments[n.API]
	h := podHolds(namespace, n, s, cfg, keys, rel, envData, obs, given.PublicURL, &facts)
	// A running API keeps its template; a new one is made despite a short
	// key (it logs everyone out on restarts), never without the login its
	// config enforces.
	plan := podPlan{
		apiSecretHash: hashSecrets(apiHashed(hashed, given)), crawlerSecretHash: hashSecrets(hashed),
		apiHeld:     (h.key != nil || h.login != nil || h.missing != nil) && api != nil,
		apiWithheld: (h.login != nil || h.missing != nil) && api == nil,
		crawlerFree: h.crawler == nil,
	}
	if err := runningPods(ctx, n, s, given, obs, generated, cfg, plan, &out); err != nil {
		return Children{}, facts, err
	}
	job := obs.Jobs[n.UpdateIdentsJob(cfg.idents)]
	// No new Job reads a missing Secret either.
	if job != nil || (h.missing == nil && apiRuns(api, n.MountedConfig(cfg.hash))) {
		out.Job = makeUpdateIdentsJob(n, s, given, cfg.idents, n.MountedConfig(cfg.hash), job)
	}
	facts.job, facts.jobName = job, n.UpdateIdentsJob(cfg.idents)
	if !given.elasticExternal() {
		facts.ElasticClientPending = elasticClientPending(n, obs, plan.apiHeld)
	}
	return out, facts, nil
}

// apiHashed are the API's Secrets' data that roll it: the pods' (hashed),
// and, with the Monocle's own Elasticsearch, its user's URL in N-elastic: a
// new password rolls the API (and not the crawler, which never reads it).
func apiHashed(hashed []map[string][]byte, given Given) []map[string][]byte {
	if given.elasticExternal() {
		return hashed
	}
	key := elasticusers.URLKey(elasticusers.Monocle)
	return append(slices.Clip(hashed), map[string][]byte{key: given.ElasticUsers[key]})
}

// heldAnswer holds the pods, their config and Jobs exactly as they are,
// for hold refuses what they read (a config, a Secret): the status says
// what they run.
func heldAnswer(ctx context.Context, n instance.Names, s Settings, obs wire.Children, given Given, generated map[string]string,
	hold *condition.FieldError, missing []*condition.FieldError, out Children) (Children, Facts, error) {
	err := heldPods(ctx, n, obs, generated, &out)
	facts := Facts{ConfigError: hold, Errors: missing,
		URL: observedPublicURL(obs.Deployments[n.API]), Sessions: condition.Sessions{AsObserved: true}}
	facts.API, facts.Crawler = components(n, obs, s.crawler || obs.Deployments[n.Crawler] != nil, hold, hold)
	if !given.elasticExternal() {
		facts.ElasticClientPending = elasticClientPending(n, obs, true)
	}
	return out, facts, err
}

// holds are the refusals that keep the pods of a config that checked from
// their new template: what the crawler or the API would read once running,
// a login key too short, a missing Secret.
type holds struct {
	crawler, key, login, missing *condition.FieldError
}

// podHolds finds the holds of a config that checked, and says them in
// facts: its errors, notes, components and sessions.
func podHolds(namespace string, n instance.Names, s Settings, cfg validConfig, keys map[string][]byte, rel wire.Related,
	envData []map[string][]byte, obs wire.Children, publicURL string, facts *Facts) holds {
	var h holds
	api, crawler := obs.Deployments[n.API], obs.Deployments[n.Crawler]
	cookiesHold, cookiesNote := loginCookies(publicURL, cfg, api != nil)
	if len(facts.Errors) == 0 {
		// Not while a Secret the pods read is missing: they cannot start
		// (ReferenceNotFound), and what it holds is not known.
		h.crawler, h.key, facts.Notes = runtimeHolds(namespace, n, s, cfg, keys, rel, envData, api != nil, crawler != nil)
		sources := []string{n.API, s.secret}[:len(envData)]
		h.login = cmp.Or(refusedVariables(namespace, sources, envData, cfg.apiKeys, api != nil),
			loginSecret(namespace, n, s, cfg, envData, api != nil), adminToken(namespace, n, s, cfg, rel, envData, api != nil), cookiesHold)
		facts.Notes = append(facts.Notes, environmentNotes(sources, envData)...)
	} else {
		// A missing Secret holds the pods as they run: a new secret-hash
		// would roll them into pods that cannot start (and kill a running
		// crawler, which is Recreate), and what the Secret holds is not
		// checked. A new Monocle gets no API nor crawler until it is
		// there: pods made before would start on it the moment it
		// appears, unchecked.
		h.missing = facts.Errors[0]
	}
	for _, hold := range []*condition.FieldError{h.login, h.crawler, h.key} {
		if hold != nil {
			facts.Errors = append(facts.Errors, hold)
		}
	}
	var keyBlock *condition.FieldError // a short key holds only a running API
	if api != nil {
		keyBlock = h.key
	}
	facts.API, facts.Crawler = components(n, obs, s.crawler, cmp.Or(h.missing, h.login, keyBlock), cmp.Or(h.missing, h.login, keyBlock, h.crawler))
	for _, w := range cfg.warnings {
		facts.Notes = append(facts.Notes, w.String())
	}
	if cookiesNote != "" {
		facts.Notes = append(facts.Notes, cookiesNote)
	}
	// With OIDC, each API process keeps its logins' state in memory
	// (src/Monocle/Api/Jwt.hs, the session store), so a login's callback
	// must reach the replica that began it.
	if cfg.oidc && s.APIReplicas > 1 {
		facts.Sessions.Sticky = s.APIReplicas
	}
	return h
}

// IdentsUpdated is the condition of the update-idents Job of the current
// idents, from the pods' facts.
func IdentsUpdated(pods Facts) metav1.Condition {
	c := metav1.Condition{Type: condition.ConditionIdentsUpdated}
	switch {
	case pods.ConfigError != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, pods.ConfigError.Reason, pods.ConfigError.Error()
	case pods.jobName == "":
		// The spec is invalid: nothing was judged.
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, condition.ReasonSpecNotApplied, "the spec is not applied"
	case pods.job == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, condition.ReasonWaitingForAPI, "Job "+pods.jobName+" starts once the API runs this config and is ready (it creates the indices the Job updates)"
	case condition.JobCondition(pods.job, batchv1.JobComplete):
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, condition.ReasonJobComplete, "Job "+pods.jobName+" completed"
	case condition.JobCondition(pods.job, batchv1.JobFailed):
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, condition.ReasonJobFailed, "Job "+pods.jobName+" failed; it runs again when the idents change or when it is deleted"
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, condition.ReasonJobRunning, "Job "+pods.jobName+" is running"
	}
	return c
}

// heldPods sets the pods' children as last applied in out, while what
// they would read is refused.
func heldPods(ctx context.Context, n instance.Names, obs wire.Children, generated map[string]string, out *Children) (err error) {
	if obs.ConfigMaps[n.API] == nil {
		// Nothing mounts it: it is the place to edit the config.
		out.Config = makeConfigMap(n, generated)
	}
	out.Held, err = applied.Children(ctx, heldByPods(n, obs))
	return err
}

// runtimeHolds are what the config reads once running, which the loader
// does not check: a workload that would break on it keeps what it runs.
func runtimeHolds(namespace string, n instance.Names, s Settings, cfg validConfig, secret map[string][]byte, rel wire.Related,
	envData []map[string][]byte, apiRuns, crawlerRuns bool) (crawlerHold, keyHold *condition.FieldError, notes []string) {
	crawlerHold, notes = missingTokens(namespace, n, s, cfg.tokens, crawlerRuns)
	// The key signs only OIDC logins and admin tokens: otherwise a short
	// one is a note, and holds nothing.
	signs := cfg.oidc || envHas(envData)("MONOCLE_ADMIN_TOKEN")
	keyHold, keyNote := loginKey(namespace, n, s, secret, rel, apiRuns, signs)
	if keyNote != "" {
		notes = append(notes, keyNote)
	}
	return crawlerHold, keyHold, notes
}

// podPlan is what Answer decided of the running pods: the secret hash each
// workload rolls on, and whether a hold keeps the API as it runs (held) or
// unmade (withheld), or keeps the crawler as it runs (not free).
type podPlan struct {
	apiSecretHash, crawlerSecretHash  string
	apiHeld, apiWithheld, crawlerFree bool
}

// runningPods sets in out the pods' children for a config that checked:
// its ConfigMaps, the API and the crawler (or the one a runtime hold keeps
// as it runs), and the earlier mounted configs pods may still mount.
func runningPods(ctx context.Context, n instance.Names, s Settings, given Given, obs wire.Children, generated map[string]string, cfg validConfig,
	plan podPlan, out *Children) (err error) {
	api, crawler := obs.Deployments[n.API], obs.Deployments[n.Crawler]
	mounted := n.MountedConfig(cfg.hash)
	r := rollout{config: mounted, secretHash: plan.apiSecretHash}
	out.Config, out.Mounted = makeConfigMap(n, generated), makeMountedConfigMap(n, cfg)
	var held []wire.Observed // the workloads kept as they run
	switch {
	case plan.apiHeld:
		held = append(held, wire.Observed{Object: api, Type: wire.TypeDeployment})
	case !plan.apiWithheld:
		out.API = makeAPIDeployment(n, s, given, r)
	}
	// Earlier mounted configs stay while pods may still mount them.
	if out.Earlier, err = applied.Children(ctx, stillMounted(n, obs, mounted)); err != nil {
		return err
	}
	// A held API holds the crawler too: it would push to an API that runs
	// another config (unknown crawlers, another crawlers_api_key).
	if s.crawler && plan.crawlerFree && !plan.apiHeld && !plan.apiWithheld {
		out.Crawler = makeCrawlerDeployment(n, s, rollout{config: mounted, secretHash: plan.crawlerSecretHash}, crawler)
	} else if s.crawler && crawler != nil {
		held = append(held, wire.Observed{Object: crawler, Type: wire.TypeDeployment})
	}
	out.Held, err = applied.Children(ctx, held)
	return err
}
