package pods

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/hook/applied"
	"github.com/change-metrics/monocle-hook/hook/child"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/elasticusers"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// One constructor per child. Each is a pure function of its arguments and
// sets only fields the hook means to own, written the way the API server
// stores them (canonical quantities, explicit protocol), so that the object
// Metacontroller reads back merges with the next answer into itself.

func makeConfigMap(n instance.Names, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   wire.TypeConfigMap,
		ObjectMeta: metav1.ObjectMeta{Name: n.API, Labels: n.Labels(child.ComponentAPI)},
		Data:       data,
	}
}

// makeMountedConfigMap holds a validated config, the only one the Monocle
// pods mount. Named by its hash and immutable: a new config is a new
// ConfigMap (which rolls the pods), and no edit reaches running pods
// without the hook's validation.
func makeMountedConfigMap(n instance.Names, cfg validConfig) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   wire.TypeConfigMap,
		ObjectMeta: metav1.ObjectMeta{Name: n.MountedConfig(cfg.hash), Labels: n.Labels(child.ComponentAPI)},
		Immutable:  ptr.To(true),
		Data:       map[string]string{configFile: cfg.text},
	}
}

// rollout is what the Monocle pods read: a change to either rolls them.
type rollout struct {
	config     string // the mounted ConfigMap
	secretHash string // of the Secrets in their environment
}

func makeAPIDeployment(n instance.Names, s Settings, given Given, r rollout) *appsv1.Deployment {
	c := monocleContainer(n, s, "api", instance.APIPort)
	// The API creates its indices before it answers /health, retrying
	// Elasticsearch for about 64 s (src/Monocle/Main.hs): up to 5 minutes
	// to start, so that a first install, Elasticsearch starting too, is not
	// restarted by the liveness probe.
	c.StartupProbe = httpProbe("/health", 0, 3)
	c.StartupProbe.FailureThreshold = 30
	// Pinned (Environment): env wins over the Secrets' keys of the name.
	elastic, proxied := elasticURLEnv(n, given), proxiedElasticURL(n, given)
	if proxied != nil {
		elastic = corev1.EnvVar{Name: "MONOCLE_ELASTIC_URL", Value: instance.ElasticProxyURL}
	}
	c.Env = append(c.Env,
		elastic,
		corev1.EnvVar{Name: "MONOCLE_API_PORT", Value: strconv.Itoa(instance.APIPort)},
		corev1.EnvVar{Name: "MONOCLE_PUBLIC_URL", Value: given.PublicURL},
		corev1.EnvVar{Name: "MONOCLE_WEBAPP_TITLE", Value: scriptString(cmp.Or(s.webappTitle, "Monocle"))},
		corev1.EnvVar{Name: "MONOCLE_WEBAPP_PATH", Value: "/usr/share/monocle/webapp/"},
		corev1.EnvVar{Name: "http_proxy", Value: ""},
	)
	c.Resources = s.apiRes
	// Set, not left empty: see the StatefulSet's updateStrategy.
	strategy := appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType}
	d := makeDeployment(n, s, n.API, child.ComponentAPI, s.APIReplicas, strategy, r, c)
	// Replicas spread over nodes where they can be, each rollout's on its
	// own (pod-template-hash): one node's loss or drain takes one. Set
	// whatever the replicas, so that scaling rolls nothing.
	d.Spec.Template.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
		MaxSkew:           1,
		TopologyKey:       corev1.LabelHostname,
		WhenUnsatisfiable: corev1.ScheduleAnyway,
		LabelSelector:     &metav1.LabelSelector{MatchLabels: n.Selector(child.ComponentAPI)},
		MatchLabelKeys:    []string{appsv1.DefaultDeploymentUniqueLabelKey},
	}}
	if proxied != nil {
		withElasticProxy(&d.Spec.Template.Spec, proxied, given.ProxyImage)
	}
	return d
}

// makeCrawlerDeployment runs one crawler, replaced with Recreate: two at
// once would crawl everything twice and spend the providers' rate limits
// twice (Monocle's own k8s/crawler-deployment.yaml does the same).
// observed, when not nil, is the crawler as it exists (see crawlerStrategy).
func makeCrawlerDeployment(n instance.Names, s Settings, r rollout, observed *appsv1.Deployment) *appsv1.Deployment {
	c := monocleContainer(n, s, "crawler", crawlerPort)
	// The crawler talks to the API, never to Elasticsearch.
	c.Env = append(c.Env,
		corev1.EnvVar{Name: "MONOCLE_PUBLIC_URL", Value: n.APIURL()},
		corev1.EnvVar{Name: "MONOCLE_CRAWLER_MONITORING", Value: strconv.Itoa(crawlerPort)},
		corev1.EnvVar{Name: "API_PROXY", Value: ""},
	)
	c.Resources = s.crawlerRes
	return makeDeployment(n, s, n.Crawler, child.ComponentCrawler, 1, crawlerStrategy(observed), r, c)
}

// crawlerStrategy is Recreate. A crawler an earlier hook made RollingUpdate
// holds the rollingUpdate parameters the server defaulted, with which the
// server refuses Recreate; and neither of Metacontroller's apply strategies
// removes a field its answers never held (an explicit null does not either).
// So it moves in two syncs: first the parameters are answered as they are,
// which makes them the hook's; then they are left out, so removed, with
// Recreate.
func crawlerStrategy(observed *appsv1.Deployment) appsv1.DeploymentStrategy {
	if observed == nil || observed.Spec.Strategy.RollingUpdate == nil || applied.Has(observed, wire.TypeDeployment, "spec", "strategy", "rollingUpdate") {
		return appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	}
	return appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: observed.Spec.Strategy.RollingUpdate}
}

func makeDeployment(n instance.Names, s Settings, name, component string, replicas int32, strategy appsv1.DeploymentStrategy, r rollout, c corev1.Container) *appsv1.Deployment {
	template := child.Template(n.Labels(component), withConfigVolume(r.config, child.PodSpec(s.scheduling, c)))
	template.Annotations = map[string]string{annotationSecretHash: r.secretHash}
	return &appsv1.Deployment{
		TypeMeta:   wire.TypeDeployment,
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: n.Labels(component)},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: n.Selector(component)},
			Strategy: strategy,
			Template: template,
		},
	}
}

// monocleContainer is what the API and the crawler share: the image, the
// Secrets as environment, the config file and health on the given port.
func monocleContainer(n instance.Names, s Settings, command string, port int32) corev1.Container {
	envFrom := []corev1.EnvFromSource{secretEnv(n.API)}
	if s.secret != "" {
		// Later sources win: the user's keys override the generated ones.
		envFrom = append(envFrom, secretEnv(s.secret))
	}
	return corev1.Container{
		Name:           command,
		Image:          s.image,
		Command:        []string{"monocle", command},
		Env:            []corev1.EnvVar{{Name: "MONOCLE_CONFIG", Value: configDir + "/" + configFile}},
		EnvFrom:        envFrom,
		Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: port}},
		ReadinessProbe: httpProbe("/health", 0, 3),
		LivenessProbe:  httpProbe("/health", 30, 5),
		VolumeMounts:   []corev1.VolumeMount{{Name: "config", MountPath: configDir, ReadOnly: true}},
	}
}

func secretEnv(name string) corev1.EnvFromSource {
	return corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}
}

// elasticURLEnv points at the managed Elasticsearch, at an external URL, or
// at a Secret key holding one (with credentials: never in the spec).
func elasticURLEnv(n instance.Names, given Given) corev1.EnvVar {
	switch {
	case given.ElasticURLSecret != nil:
		return corev1.EnvVar{Name: "MONOCLE_ELASTIC_URL", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: given.ElasticURLSecret}}
	case given.ElasticURL != "":
		return corev1.EnvVar{Name: "MONOCLE_ELASTIC_URL", Value: given.ElasticURL}
	}
	return elasticusers.URLEnv(n.Elastic, elasticusers.Monocle)
}

// makeUpdateIdentsJob re-attributes changes to the config's idents. Its name
// carries the idents' hash, so an idents change is a new Job. observed, when
// not nil, is the Job of that name as it exists: a Job's template is
// immutable, so it is answered as it is.
func makeUpdateIdentsJob(n instance.Names, s Settings, given Given, identsHash, config string, observed *batchv1.Job) *batchv1.Job {
	c := corev1.Container{
		Name:  "update-idents",
		Image: s.image,
		// $(VAR) is expanded by the kubelet: the URL, which may hold
		// credentials, stays in the environment (and its Secret).
		Command: []string{"monocle", "janitor", "update-idents",
			"--elastic", "$(MONOCLE_ELASTIC_URL)", "--config", configDir + "/" + configFile},
		Env:          []corev1.EnvVar{elasticURLEnv(n, given)},
		Resources:    instance.Resources("100m", "256Mi", "1Gi"),
		VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: configDir, ReadOnly: true}},
	}
	spec := withConfigVolume(config, child.PodSpec(s.scheduling, c))
	spec.RestartPolicy = corev1.RestartPolicyNever
	job := &batchv1.Job{
		TypeMeta:   wire.TypeJob,
		ObjectMeta: metav1.ObjectMeta{Name: n.UpdateIdentsJob(identsHash), Labels: n.Labels(child.ComponentUpdateIdents)},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To(int32(3)),
			Template:     child.Template(n.Labels(child.ComponentUpdateIdents), spec),
		},
	}
	if observed != nil {
		job.Spec.Template = observed.Spec.Template
	}
	return job
}

// withConfigVolume mounts the validated config, ConfigMap configMap.
func withConfigVolume(configMap string, spec corev1.PodSpec) corev1.PodSpec {
	spec.Volumes = []corev1.Volume{{
		Name: "config",
		VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: configMap},
		}},
	}}
	return spec
}

// httpProbe is an HTTP GET of path on the "http" port every period
// seconds (0: the API server's default, 10).
func httpProbe(path string, period, timeout int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: path,
			Port: intstr.FromString("http"),
		}},
		PeriodSeconds:  period,
		TimeoutSeconds: timeout,
	}
}

// scriptString is a title as Monocle 1.11.2 can show it: the API writes
// MONOCLE_WEBAPP_TITLE verbatim into a JavaScript string of the web UI's
// inline script (src/Monocle/Main.hs:57, web/public/index.html:12), and
// uses it nowhere else. A quote, a backslash or a line break would end or
// corrupt the script (the UI then shows nothing) and "</script" would end
// the element, so each of those, and every character that is not
// printable ASCII (the image sets no locale: a process reads a non-ASCII
// byte of its environment as U+FFFD), is written as the JavaScript escape
// the browser reads back as that character.
func scriptString(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 0x20 && r < 0x7f && r != '"' && r != '\\' && r != '<':
			b.WriteRune(r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, "\\u%04x\\u%04x", r1, r2)
		default:
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}
