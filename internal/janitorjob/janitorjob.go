// Package janitorjob prints a Job that runs one command of Monocle's
// janitor (src/CLI.hs, usageJanitor) for a Monocle, with the image, config
// and Elasticsearch URL its API runs. Like restorejob, it is never applied by
// the hook: an admin reads it and applies it once.
//
// The janitor exits 0 on a workspace the config lacks and, for
// set-crawler-commit-date, on a crawler it lacks or a date it cannot read
// (src/CLI.hs, src/Monocle/Backend/Janitor.hs: it logs and does nothing):
// so each is checked here, against the config the API mounts, before a Job
// that would do nothing is printed.
package janitorjob

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/template"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

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

// Run is `monocle-hook janitor-job COMMAND --monocle N -f objects.yaml ...`.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	usage := "Usage: monocle-hook janitor-job COMMAND --monocle NAME -f OBJECTS [--workspace W] [--crawler C] [--commit-date D]\n\n" +
		"Prints (never applies) a Job that runs `monocle janitor COMMAND` for the Monocle NAME, with the image, config\n" +
		"and Elasticsearch URL its API runs, read from OBJECTS (- for standard input):\n" +
		"  kubectl -n NS get deployments,configmaps -l app.kubernetes.io/instance=NAME -o yaml\n\nCommands:\n"
	for _, name := range slices.Sorted(maps.Keys(commands)) {
		usage += fmt.Sprintf("  %-24s %s\n", name, commands[name].about)
	}
	fs := snapshot.NewFlagSet("janitor-job", stderr, usage+"\n")
	var o Options
	var file string
	fs.StringVar(&o.Monocle, "monocle", "", "the Monocle's name")
	fs.StringVar(&file, "f", "", "the Monocle's Deployments and ConfigMaps, as kubectl get -o yaml prints them (- for standard input)")
	fs.StringVar(&o.Workspace, "workspace", "", "the workspace (update-idents: all when not set)")
	fs.StringVar(&o.Crawler, "crawler", "", "the crawler's name in the workspace")
	fs.StringVar(&o.CommitDate, "commit-date", "", "the new commit date: YYYY-MM-DD (midnight UTC) or YYYY-MM-DDThh:mm:ssZ (a date in Monocle's other form, with spaces, is rewritten as the latter)")
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		o.Command, args = args[0], args[1:]
	}
	if err := snapshot.Parse(fs, args); err != nil {
		return err
	}
	if _, ok := commands[o.Command]; !ok {
		fs.Usage()
		return fmt.Errorf("%w: COMMAND is one of %s, not %s", snapshot.ErrUsage, strings.Join(slices.Sorted(maps.Keys(commands)), ", "), printable.Quote(o.Command))
	}
	if o.Monocle == "" || file == "" {
		return fmt.Errorf("%w: --monocle and -f are required", snapshot.ErrUsage)
	}
	objects, err := readObjects(file, stdin, o.Monocle)
	if err != nil {
		return err
	}
	return render(stdout, o, objects)
}

// readObjects reads -f, file or stdin ("-"), at most maxObjects.
func readObjects(file string, stdin io.Reader, monocle string) ([]byte, error) {
	objects, err := snapshot.ReadFile(file, stdin, maxObjects+1)
	if err != nil {
		return nil, err
	}
	if len(objects) > maxObjects {
		return nil, fmt.Errorf("-f: more than %d MiB: give only the Monocle's Deployments and ConfigMaps (-l app.kubernetes.io/instance=%s)", maxObjects>>20, monocle)
	}
	return objects, nil
}

// maxObjects bounds what -f reads: a Monocle's Deployments and ConfigMaps
// hold at most a few configs of 255 KiB.
const maxObjects = 32 << 20

// render writes the Job for o, its API read from objects, as YAML preceded
// by what it does as comments.
func render(w io.Writer, o Options, objects []byte) error {
	if errs := validation.IsDNS1123Label(o.Monocle); len(errs) > 0 || len(o.Monocle) > instance.MaxNameLength {
		return fmt.Errorf("--monocle %s is not a Monocle's name: a DNS label of at most %d characters", printable.Quote(o.Monocle), instance.MaxNameLength)
	}
	api, configs, err := read(objects, instance.For(o.Monocle).API)
	if err != nil {
		return err
	}
	if api == nil {
		return fmt.Errorf("no Deployment %s-api in -f: the Monocle runs no API yet (or -f lacks it: kubectl -n NS get deployments,configmaps -l app.kubernetes.io/instance=%s -o yaml)", o.Monocle, o.Monocle)
	}
	pod := api.Spec.Template.Spec
	if api.Namespace == "" || len(pod.Containers) == 0 || len(pod.Volumes) == 0 || pod.Volumes[0].ConfigMap == nil {
		return fmt.Errorf("the Deployment %s is not one the hook made, as kubectl get prints it: no namespace, no container or no config volume", api.Name)
	}
	// The namespace is printed into the comments' commands: -f is a file
	// anyone may have written, so it is held to what the API server
	// holds a namespace to.
	if !command.Namespace(api.Namespace) {
		return fmt.Errorf("the Deployment %s's namespace %s is not a DNS label: not one kubectl get prints", api.Name, printable.Quote(api.Namespace))
	}
	mounted := pod.Volumes[0].ConfigMap.Name
	cm := configs[mounted]
	if cm == nil {
		return fmt.Errorf("no ConfigMap %s in -f: the config the API mounts", mounted)
	}
	if err := checkAgainst(&o, cm.Data["config.yaml"]); err != nil {
		return err
	}
	// The Elasticsearch URL reaches the janitor's --elastic as
	// $(MONOCLE_ELASTIC_URL), through the same wrapper: checked when the
	// Deployment holds it, named in the comments when a Secret does.
	url := slices.IndexFunc(pod.Containers[0].Env, func(e corev1.EnvVar) bool { return e.Name == "MONOCLE_ELASTIC_URL" })
	if url < 0 {
		return fmt.Errorf("the Deployment %s has no MONOCLE_ELASTIC_URL: not one the hook made", api.Name)
	}
	secret := ""
	switch e := pod.Containers[0].Env[url]; {
	case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
		secret = fmt.Sprintf("key %s of Secret %s", e.ValueFrom.SecretKeyRef.Key, e.ValueFrom.SecretKeyRef.Name)
	case e.ValueFrom != nil:
		return fmt.Errorf("the Deployment %s's MONOCLE_ELASTIC_URL is neither a value nor a Secret's key: not one the hook made", api.Name)
	default:
		if err := checkURL(e.Value, api.Name); err != nil {
			return err
		}
	}
	job := makeJob(o, api)
	return restorejob.Print(w, header, job, map[string]any{"o": o, "Job": job.Name, "Namespace": job.Namespace, "Config": mounted, "About": commands[o.Command].about, "Secret": secret})
}

// read finds the API Deployment and the ConfigMaps in objects (YAML
// documents or Lists, as kubectl get -o yaml prints them).
func read(data []byte, apiName string) (*appsv1.Deployment, map[string]*corev1.ConfigMap, error) {
	var api *appsv1.Deployment
	configs := map[string]*corev1.ConfigMap{}
	var add func(doc []byte) error
	add = func(doc []byte) error {
		var head struct {
			Kind  string            `json:"kind"`
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(doc, &head); err != nil {
			return err
		}
		switch head.Kind {
		case "List":
			for _, item := range head.Items {
				if err := add(item); err != nil {
					return err
				}
			}
		case "Deployment":
			var d appsv1.Deployment
			if err := json.Unmarshal(doc, &d); err != nil {
				return err
			}
			if d.Name == apiName {
				api = &d
			}
		case "ConfigMap":
			var cm corev1.ConfigMap
			if err := json.Unmarshal(doc, &cm); err != nil {
				return err
			}
			configs[cm.Name] = &cm
		}
		return nil
	}
	for _, doc := range bytes.Split(data, []byte("\n---")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		j, err := yaml.YAMLToJSON(doc)
		if err == nil && string(j) != "null" {
			err = add(j)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("-f: %w", err)
		}
	}
	return api, configs, nil
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
// its arguments: the same request is the same Job, so applying the manifest
// again runs nothing again.
func jobName(o Options) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{o.Command, o.Workspace, o.Crawler, o.CommitDate}, "\x00")))
	return o.Monocle + "-janitor-" + hex.EncodeToString(sum[:])[:10]
}

// makeJob runs the janitor as the hook runs update-idents: the API's image,
// its mounted config, its MONOCLE_ELASTIC_URL (a Secret's key stays one,
// expanded by the kubelet), its pod's scheduling and restricted security.
// No Secret in the environment: the janitor reads none.
func makeJob(o Options, api *appsv1.Deployment) *batchv1.Job {
	pod := api.Spec.Template.Spec
	from := pod.Containers[0]
	args := []string{"monocle", "janitor", o.Command, "--elastic", "$(MONOCLE_ELASTIC_URL)", "--config", "/etc/monocle/config.yaml"}
	for _, arg := range [][2]string{{"--workspace", o.Workspace}, {"--crawler-name", o.Crawler}, {"--commit-date", o.CommitDate}} {
		if arg[1] != "" {
			args = append(args, arg[0], arg[1])
		}
	}
	env := slices.DeleteFunc(slices.Clone(from.Env), func(e corev1.EnvVar) bool {
		return e.Name != "MONOCLE_ELASTIC_URL"
	})
	c := corev1.Container{
		Name:            "janitor",
		Image:           from.Image,
		Command:         args,
		Env:             env,
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

var header = template.Must(template.New("header").Parse(`# monocle janitor {{.o.Command}} for Monocle {{.o.Monocle}} in namespace {{.Namespace}}: {{.About}}.
# Its image, config ({{.Config}}) and Elasticsearch URL are those the API runs.
{{- if .Secret}}
# The URL is read from {{.Secret}} when the Job runs, unseen by monocle-hook: a space,
# tab, newline, '*', '?', '[', '\' or non-ASCII character in it would reach the janitor split,
# expanded or changed by the image's unquoted $* (percent-encode them in the Secret).
{{- end}}
# Printed by monocle-hook janitor-job: only you apply it, once. Applied again, it is unchanged and runs
# nothing again; delete it to run it again.
#
#   kubectl apply -f janitor.yaml    # this output, saved as janitor.yaml
#   kubectl -n {{.Namespace}} wait --for=condition=complete --timeout=10m job/{{.Job}}
#   kubectl -n {{.Namespace}} logs job/{{.Job}}
`))
