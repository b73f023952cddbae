package janitorjob

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/snapshot"
)

// run is what `kubectl monocle janitor` does with Build, its objects read
// from stdin (kubectl get -o yaml's output) instead of the cluster: args
// are COMMAND --monocle N [--workspace W] [--crawler C] [--commit-date D]
// (-f is read and ignored, stdin being the objects); it writes the Job as
// YAML, preceded by the note as a comment when there is one.
func run(args []string, stdin io.Reader, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("janitor", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o Options
	fs.StringVar(&o.Monocle, "monocle", "", "")
	fs.String("f", "", "")
	fs.StringVar(&o.Workspace, "workspace", "", "")
	fs.StringVar(&o.Crawler, "crawler", "", "")
	fs.StringVar(&o.CommitDate, "commit-date", "", "")
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		o.Command, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", snapshot.ErrUsage, err)
	}
	objects, err := io.ReadAll(stdin)
	if err != nil {
		return err
	}
	api, configs, err := read(objects, instance.For(o.Monocle).API)
	if err != nil {
		return err
	}
	job, note, err := Build(o, api, func(name string) (*corev1.ConfigMap, error) {
		if cm := configs[name]; cm != nil {
			return cm, nil
		}
		return nil, errors.New("not found")
	})
	if err != nil {
		return err
	}
	if note != "" {
		fmt.Fprintf(stdout, "# %s\n", note)
	}
	doc, err := yaml.Marshal(struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        metav1.ObjectMeta `json:"metadata"`
		Spec            batchv1.JobSpec   `json:"spec"`
	}{job.TypeMeta, job.ObjectMeta, job.Spec})
	if err != nil {
		return err
	}
	_, err = stdout.Write(doc)
	return err
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
			return nil, nil, err
		}
	}
	return api, configs, nil
}
