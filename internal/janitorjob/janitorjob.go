// Package janitorjob builds the Job that runs one command of Monocle's
// janitor (src/CLI.hs, usageJanitor) for a Monocle, with the image, config
// and Elasticsearch URL its API runs: what `kubectl monocle janitor`
// creates. The hook never makes it.
//
// The janitor exits 0 on a workspace the config lacks and, for
// set-crawler-commit-date, on a crawler it lacks or a date it cannot read
// (src/CLI.hs, src/Monocle/Backend/Janitor.hs: it logs and does nothing):
// so each is checked here, against the config the API mounts, before a Job
// that would do nothing is made.
package janitorjob

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/internal/command"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/monocleconfig"
	"github.com/change-metrics/monocle-hook/internal/printable"
	"github.com/change-metrics/monocle-hook/internal/restorejob"
	"github.com/change-metrics/monocle-hook/internal/snapshot"
)

// The janitor's commands, and what each needs.
var commands = map[string]struct {
	workspace, crawler, date bool // required
	about                    string
}{
	"update-idents":           {about: "re-attribute changes to the config's idents (of one workspace, or of all)"},
	"wipe-crawler-data":       {workspace: true, crawler: true, about: "delete a crawler's changes, task data, events and crawl state; run it while the crawler is still in the config (the janitor reads its prefix there)"},
	"set-crawler-commit-date": {workspace: true, crawler: true, date: true, about: "move the commit date of the entities a crawler's config names (its repositories, organization, users), from which it crawls them again (update_since is read only for what it never crawled)"},
}

// Options of one janitor Job.
type Options struct {
	Monocle, Command               string
	Workspace, Crawler, CommitDate string
}

// Commands are the janitor's commands, each with what it does.
func Commands() map[string]string {
	about := map[string]string{}
	for name, c := range commands {
		about[name] = c.about
	}
	return about
}

// Build is the Job that runs o's command for the Monocle o.Monocle, whose
// API runs as api (nil: it runs none); config gets a ConfigMap of api's
// namespace by name (the config the API mounts). It refuses what the
// janitor would not take or would silently do nothing with; note, when not
// "", is for the reader: the Elasticsearch URL comes from a Secret the
// hook does not write, unseen here.
func Build(o Options, api *appsv1.Deployment, config func(name string) (*corev1.ConfigMap, error)) (job *batchv1.Job, note string, err error) {
	if _, ok := commands[o.Command]; !ok {
		return nil, "", fmt.Errorf("%w: COMMAND is one of %s, not %s", snapshot.ErrUsage, strings.Join(slices.Sorted(maps.Keys(commands)), ", "), printable.Quote(o.Command))
	}
	if errs := validation.IsDNS1123Label(o.Monocle); len(errs) > 0 || len(o.Monocle) > instance.MaxNameLength {
		return nil, "", fmt.Errorf("%s is not a Monocle's name: a DNS label of at most %d characters", printable.Quote(o.Monocle), instance.MaxNameLength)
	}
	if api == nil {
		return nil, "", fmt.Errorf("no Deployment %s: Monocle %s runs no API, and the janitor runs with the API's image, config and Elasticsearch URL", instance.For(o.Monocle).API, o.Monocle)
	}
	pod := api.Spec.Template.Spec
	if len(pod.Containers) == 0 || len(pod.Volumes) == 0 || pod.Volumes[0].ConfigMap == nil {
		return nil, "", fmt.Errorf("the Deployment %s is not one the hook made: no container or no config volume", api.Name)
	}
	if !command.Namespace(api.Namespace) {
		return nil, "", fmt.Errorf("the Deployment %s's namespace %s is not a DNS label: not one the API server holds", api.Name, printable.Quote(api.Namespace))
	}
	mounted := pod.Volumes[0].ConfigMap.Name
	cm, err := config(mounted)
	if err != nil {
		return nil, "", fmt.Errorf("the config the API mounts, ConfigMap %s: %w", mounted, err)
	}
	if err := checkAgainst(&o, cm.Data[instance.ConfigFile]); err != nil {
		return nil, "", err
	}
	// The Elasticsearch URL reaches the janitor's --elastic as
	// $(MONOCLE_ELASTIC_URL), through the same wrapper: checked when the
	// Deployment holds it, named in the note when a Secret the hook does
	// not write holds it (the hook's N-elastic holds only letters, digits
	// and the URL's own punctuation: elasticusers).
	url := slices.IndexFunc(pod.Containers[0].Env, func(e corev1.EnvVar) bool { return e.Name == "MONOCLE_ELASTIC_URL" })
	if url < 0 {
		return nil, "", fmt.Errorf("the Deployment %s has no MONOCLE_ELASTIC_URL: not one the hook made", api.Name)
	}
	e := pod.Containers[0].Env[url]
	if e.Value == instance.ElasticProxyURL {
		// The API goes through its proxy, which reads the URL from a
		// Secret's key: the janitor, which has no proxy, reads that key.
		key := instance.ElasticProxyURLRef(&pod)
		if key == nil {
			return nil, "", fmt.Errorf("the Deployment %s's MONOCLE_ELASTIC_URL is its Elasticsearch proxy's, and it runs no proxy: not one the hook made", api.Name)
		}
		e = corev1.EnvVar{Name: e.Name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: key}}
	}
	switch {
	case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
		if ref := e.ValueFrom.SecretKeyRef; ref.Name != instance.For(o.Monocle).Elastic {
			note = fmt.Sprintf("the Elasticsearch URL is read from key %s of Secret %s when the Job runs, unseen here: a space, tab, newline, '*', '?', '[', '\\' or non-ASCII character in it would reach the janitor split, expanded or changed by the image's unquoted $* (percent-encode them in the Secret)", printable.Quote(ref.Key), printable.Quote(ref.Name))
		}
	case e.ValueFrom != nil:
		return nil, "", fmt.Errorf("the Deployment %s's MONOCLE_ELASTIC_URL is neither a value nor a Secret's key: not one the hook made", api.Name)
	default:
		if err := checkURL(e.Value, api.Name); err != nil {
			return nil, "", err
		}
	}
	return makeJob(o, api, e), note, nil
}

// checkAgainst refuses what the janitor would silently do nothing with:
// a workspace or crawler the config lacks, a date it cannot read, and the
// arguments its command does not take; then a name that would not reach
// it as it is (checkNames). It rewrites the date as the Job passes it
// (commitDate).
func checkAgainst(o *Options, config string) error {
	need := commands[o.Command]
	switch {
	case need.workspace && o.Workspace == "":
		return fmt.Errorf("%w: %s needs --workspace", snapshot.ErrUsage, o.Command)
	case need.crawler && o.Crawler == "":
		return fmt.Errorf("%w: %s needs --crawler", snapshot.ErrUsage, o.Command)
	case need.date && o.CommitDate == "":
		return fmt.Errorf("%w: %s needs --commit-date", snapshot.ErrUsage, o.Command)
	case !need.crawler && o.Crawler != "", !need.date && o.CommitDate != "":
		return fmt.Errorf("%w: %s takes no --crawler nor --commit-date", snapshot.ErrUsage, o.Command)
	}
	if o.CommitDate != "" {
		date, ok := commitDate(o.CommitDate)
		if !ok {
			return fmt.Errorf("--commit-date %s is not a date Monocle's janitor reads: YYYY-MM-DD (midnight UTC) or YYYY-MM-DDThh:mm:ssZ (src/Monocle/Prelude.hs:444-450, parseDateValue)", printable.Quote(o.CommitDate))
		}
		o.CommitDate = date
	}
	// The janitor loads the config without the pods' environment.
	cfg, err := monocleconfig.Parse([]byte(config), nil)
	if err != nil {
		return fmt.Errorf("the config the API mounts does not load: %w", err)
	}
	if o.Workspace == "" {
		return nil
	}
	var names []string
	for _, w := range cfg.Workspaces {
		if w.Name != o.Workspace {
			names = append(names, w.Name)
			continue
		}
		if o.Crawler != "" && !slices.Contains(w.Crawlers, o.Crawler) {
			return fmt.Errorf("workspace %s has no crawler %s; its crawlers: %s", printable.Quote(o.Workspace), printable.Quote(o.Crawler), list(w.Crawlers))
		}
		return checkNames(*o)
	}
	return fmt.Errorf("the config the API mounts has no workspace %s; its workspaces: %s", printable.Quote(o.Workspace), list(names))
}

// list quotes the first 20 names, and counts the others.
func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	var quoted []string
	for _, n := range names[:min(len(names), 20)] {
		quoted = append(quoted, printable.Quote(n))
	}
	if len(names) > 20 {
		quoted = append(quoted, fmt.Sprintf("and %d more", len(names)-20))
	}
	return strings.Join(quoted, ", ")
}

// jobName is the Monocle's name, "-janitor-" and a hash of the command and
// its arguments: the same request is the same Job, so that it never runs
// twice at once.
func jobName(o Options) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{o.Command, o.Workspace, o.Crawler, o.CommitDate}, "\x00")))
	return o.Monocle + "-janitor-" + hex.EncodeToString(sum[:])[:10]
}

// makeJob runs the janitor as the hook runs update-idents: the API's image,
// its mounted config, its MONOCLE_ELASTIC_URL (a Secret's key stays one,
// expanded by the kubelet), its pod's scheduling and restricted security.
// No Secret in the environment: the janitor reads none.
func makeJob(o Options, api *appsv1.Deployment, elasticURL corev1.EnvVar) *batchv1.Job {
	pod := api.Spec.Template.Spec
	from := pod.Containers[0]
	args := []string{"monocle", "janitor", o.Command, "--elastic", "$(MONOCLE_ELASTIC_URL)", "--config", "/etc/monocle/config.yaml"}
	for _, arg := range [][2]string{{"--workspace", o.Workspace}, {"--crawler-name", o.Crawler}, {"--commit-date", o.CommitDate}} {
		if arg[1] != "" {
			args = append(args, arg[0], arg[1])
		}
	}
	c := corev1.Container{
		Name:            "janitor",
		Image:           from.Image,
		Command:         args,
		Env:             []corev1.EnvVar{elasticURL},
		Resources:       instance.Resources("100m", "256Mi", "1Gi"),
		SecurityContext: from.SecurityContext,
		VolumeMounts:    []corev1.VolumeMount{{Name: pod.Volumes[0].Name, MountPath: "/etc/monocle", ReadOnly: true}},
	}
	// One retry: each command can run twice (a wipe deletes what is there,
	// a date is set again).
	return restorejob.NewJob(jobName(o), api.Namespace, instance.For(o.Monocle).Selector("janitor"), 1, corev1.PodSpec{
		Containers:                   []corev1.Container{c},
		RestartPolicy:                corev1.RestartPolicyNever,
		AutomountServiceAccountToken: ptr.To(false),
		SecurityContext:              pod.SecurityContext,
		Volumes:                      pod.Volumes[:1],
		NodeSelector:                 pod.NodeSelector,
		Tolerations:                  pod.Tolerations,
		Affinity:                     pod.Affinity,
		ImagePullSecrets:             pod.ImagePullSecrets,
	})
}
