package hook

import (
	"cmp"
	"slices"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/change-metrics/monocle-hook/hook/access"
	"github.com/change-metrics/monocle-hook/hook/applied"
	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/elasticusers"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// podFacts is what the status says of the Monocle pods (the API, the
// crawler, the update-idents Job), learned while answering them.
type podFacts struct {
	url     string // the public URL the API runs with
	crawler bool   // a crawler is enabled, or runs
	// configError, when not nil, holds the pods and their config as they
	// are: it is the first reason of SpecApplied, which render and the
	// invalid_spec metric read.
	configError *condition.FieldError
	// errors are the rest of what is not applied: a missing Secret, a
	// workload held by what it would read once running.
	errors []*condition.FieldError
	// apiBlock and crawlerBlock are the refusals that hold or withhold the
	// API and the crawler, or that they wait for (a missing Secret): a
	// workload not ready then waits for its writer, not for Kubernetes.
	apiBlock, crawlerBlock *condition.FieldError
	notes                  []string
	// The update-idents Job of the current idents, if observed, and its
	// name ("" when the idents are unknown).
	job     *batchv1.Job
	jobName string
	// sessions are what the API's Service keeps to (hook/access).
	sessions access.Sessions
}

// podChildren are the children of the Monocle pods: the ConfigMaps of their
// config, the API's and the crawler's Deployments, the update-idents Job.
// What the pods read (the Secrets in their environment, the config they
// mount), refused, holds them, with their config and Jobs, exactly as they
// are. Their facts say which sessions the API's Service keeps to.
func podChildren(namespace string, n instance.Names, s settings, obs wire.Children, rel wire.Related, env Env,
	secret, elasticUsers map[string][]byte) ([]wire.Child, podFacts, error) {
	generated := configData(obs.ConfigMaps[n.API], s.config)
	envData, hashed, missing, hold := podSecrets(s, secret, rel)
	apiHashed := hashed
	if !s.elastic.External() {
		// The API reads its Elasticsearch user's URL from N-elastic: a new
		// password rolls it (and not the crawler, which never reads it).
		key := elasticusers.URLKey(elasticusers.Monocle)
		apiHashed = append(slices.Clip(hashed), map[string][]byte{key: elasticUsers[key]})
	}
	var cfg validConfig
	if hold == nil {
		var text string
		if text, hold = configSource(n, s, generated, rel); hold == nil {
			cfg, hold = validateConfig(n, s, text, envHas(envData))
		}
	}
	if hold != nil {
		children, err := heldPods(n, obs, env, generated)
		facts := podFacts{configError: hold, errors: missing, apiBlock: hold, crawlerBlock: hold,
			// The pods are held: the status says what they run.
			url: observedPublicURL(obs.Deployments[n.API]), crawler: s.crawler || obs.Deployments[n.Crawler] != nil,
			sessions: access.Sessions{AsObserved: true}}
		return children, facts, err
	}
	facts := podFacts{url: s.access.PublicURL, crawler: s.crawler, errors: missing}
	api, crawler := obs.Deployments[n.API], obs.Deployments[n.Crawler]
	var crawlerHold, keyHold, loginHold *condition.FieldError
	if len(missing) == 0 {
		// Not while a Secret the pods read is missing: they cannot start
		// (ReferenceNotFound), and what it holds is not known.
		crawlerHold, keyHold, facts.notes = runtimeHolds(namespace, n, s, cfg, secret, rel, envData, api != nil, crawler != nil)
		sources := []string{n.API, s.secret}[:len(envData)]
		loginHold = cmp.Or(refusedVariables(namespace, sources, envData, cfg.apiKeys, api != nil),
			loginSecret(namespace, n, s, cfg, envData, api != nil), adminToken(namespace, n, s, cfg, rel, envData, api != nil))
		facts.notes = append(facts.notes, environmentNotes(sources, envData)...)
	}
	for _, h := range []*condition.FieldError{loginHold, crawlerHold, keyHold} {
		if h != nil {
			facts.errors = append(facts.errors, h)
		}
	}
	var keyBlock *condition.FieldError // a short key holds only a running API
	if api != nil {
		keyBlock = keyHold
	}
	var missingBlock *condition.FieldError // the pods wait for the Secret
	if len(missing) > 0 {
		missingBlock = missing[0]
	}
	facts.apiBlock = cmp.Or(missingBlock, loginHold, keyBlock)
	facts.crawlerBlock = cmp.Or(missingBlock, loginHold, keyBlock, crawlerHold)
	for _, w := range cfg.warnings {
		facts.notes = append(facts.notes, w.String())
	}
	// With OIDC, each API process keeps its logins' state in memory
	// (src/Monocle/Api/Jwt.hs, the session store), so a login's callback
	// must reach the replica that began it.
	if cfg.oidc && s.apiReplicas > 1 {
		facts.sessions.Sticky = s.apiReplicas
	}
	// A running API keeps its template; a new one is made despite a short
	// key (it logs everyone out on restarts), never without the login its
	// config enforces.
	apiHeld := (keyHold != nil || loginHold != nil) && api != nil
	apiWithheld := loginHold != nil && api == nil
	children, err := runningPods(n, s, obs, env, generated, cfg, hashSecrets(apiHashed), hashSecrets(hashed), apiHeld, apiWithheld, crawlerHold == nil)
	if err != nil {
		return nil, facts, err
	}
	job := obs.Jobs[n.UpdateIdentsJob(cfg.idents)]
	if job != nil || apiRuns(api, n.MountedConfig(cfg.hash)) {
		children = append(children, makeUpdateIdentsJob(n, s, cfg.idents, n.MountedConfig(cfg.hash), job))
	}
	facts.job, facts.jobName = job, n.UpdateIdentsJob(cfg.idents)
	return children, facts, nil
}

// heldPods are the pods' children as last applied, while what they would
// read is refused.
func heldPods(n instance.Names, obs wire.Children, env Env, generated map[string]string) ([]wire.Child, error) {
	var children []wire.Child
	if obs.ConfigMaps[n.API] == nil {
		// Nothing mounts it: it is the place to edit the config.
		children = append(children, makeConfigMap(n, generated))
	}
	held, err := applied.Children(env.Context, heldByPods(n, obs))
	return append(children, held...), err
}

// runtimeHolds are what the config reads once running, which the loader
// does not check: a workload that would break on it keeps what it runs.
func runtimeHolds(namespace string, n instance.Names, s settings, cfg validConfig, secret map[string][]byte, rel wire.Related,
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

// runningPods are the pods' children for a config that checked: its
// ConfigMaps, the API and the crawler (or the one a runtime hold keeps as it
// runs), and the earlier mounted configs pods may still mount.
func runningPods(n instance.Names, s settings, obs wire.Children, env Env, generated map[string]string, cfg validConfig,
	apiSecretHash, crawlerSecretHash string, apiHeld, apiWithheld, crawlerFree bool) ([]wire.Child, error) {
	api, crawler := obs.Deployments[n.API], obs.Deployments[n.Crawler]
	mounted := n.MountedConfig(cfg.hash)
	r := rollout{config: mounted, secretHash: apiSecretHash}
	children := []wire.Child{makeConfigMap(n, generated), makeMountedConfigMap(n, cfg)}
	var held []wire.Observed // the workloads kept as they run
	switch {
	case apiHeld:
		held = append(held, wire.Observed{Object: api, Type: wire.TypeDeployment})
	case !apiWithheld:
		children = append(children, makeAPIDeployment(n, s, r))
	}
	// Earlier mounted configs stay while pods may still mount them.
	earlier, err := applied.Children(env.Context, stillMounted(n, obs, mounted))
	if err != nil {
		return nil, err
	}
	children = append(children, earlier...)
	// A held API holds the crawler too: it would push to an API that runs
	// another config (unknown crawlers, another crawlers_api_key).
	if s.crawler && crawlerFree && !apiHeld && !apiWithheld {
		children = append(children, makeCrawlerDeployment(n, s, rollout{config: mounted, secretHash: crawlerSecretHash}, crawler))
	} else if s.crawler && crawler != nil {
		held = append(held, wire.Observed{Object: crawler, Type: wire.TypeDeployment})
	}
	kept, err := applied.Children(env.Context, held)
	return append(children, kept...), err
}
