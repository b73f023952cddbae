package hook

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/pods"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/command"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// What the hook sets in each container is exactly Environment's pinned
// rows, on the containers each names.
func TestPinnedVariables(t *testing.T) {
	n := instance.For("monocle-sample")
	a := decodeAnswer(t, syncJSON(t, steady(t, configSpec(t, githubConfig, `{"secretRef":{"name":"tokens"}}`))))
	for _, tc := range []struct{ container, deployment string }{{"API", n.API}, {"crawler", n.Crawler}} {
		var d struct {
			Spec struct {
				Template struct {
					Spec corev1.PodSpec `json:"spec"`
				} `json:"template"`
			} `json:"spec"`
		}
		b, _ := json.Marshal(a.child("Deployment", tc.deployment))
		if err := json.Unmarshal(b, &d); err != nil || len(d.Spec.Template.Spec.Containers) != 1 {
			t.Fatalf("%s: %v %s", tc.deployment, err, b)
		}
		var set, pinned []string
		for _, e := range d.Spec.Template.Spec.Containers[0].Env {
			set = append(set, e.Name)
		}
		for _, v := range pods.Environment {
			if v.Set == pods.SetPinned && slices.Contains(strings.Split(v.ReadBy, ", "), tc.container) {
				pinned = append(pinned, v.Name)
			}
		}
		slices.Sort(set)
		slices.Sort(pinned)
		if !slices.Equal(set, pinned) {
			t.Errorf("the %s's env sets %v; Environment pins %v", tc.container, set, pinned)
		}
	}
}

// A Secret in the pods' environment that sets what changes how Monocle's
// processes run, or the crawlers' key empty, holds the API and the crawler
// with the command that removes the keys; what it sets that the hook pins
// changes nothing, with a note.
func TestVariableRefused(t *testing.T) {
	n := instance.For("monocle-sample")
	user := func(data map[string]string) wire.Related {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tokens"}, Data: map[string][]byte{}}
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
		return wire.Related{Secrets: map[string]*corev1.Secret{"tokens": s}}
	}
	withUser := `{"secretRef":{"name":"tokens"}}`
	named := "workspaces:\n  - name: demo\n    crawlers_api_key: DEMO_KEY\n    crawlers: []\n"
	many := map[string]string{}
	for i := range 7 {
		many[fmt.Sprintf("LD_X%d", i)] = "x"
	}
	tests := map[string]struct {
		spec      string
		related   wire.Related
		generated map[string]string
		reason    string
		says      []string
	}{
		// GHC's rts/RtsFlags.c reads GHCRTS: monocle.cabal builds with -rtsopts.
		"GHCRTS in the user's Secret": {
			spec: configSpec(t, githubConfig, withUser), related: user(map[string]string{"GITHUB_TOKEN": "t", "GHCRTS": "-M16m"}),
			reason: condition.ReasonVariableRefused,
			says: []string{`key "GHCRTS" of Secret "tokens" would change how Monocle's processes run (GHCRTS: runtime options`,
				"the API and the crawler keep their running templates",
				`run kubectl -n default patch secret tokens --type=json -p '[{"op":"remove","path":"/data/GHCRTS"}]'`},
		},
		// nix/default.nix:506: the wrapper sets LD_PRELOAD and runs env by name.
		"LD_PRELOAD and PATH in the generated Secret": {
			spec: baseSpec, generated: map[string]string{"LD_PRELOAD": "/tmp/x.so", "PATH": "/tmp"},
			reason: condition.ReasonVariableRefused,
			says: []string{`key "LD_PRELOAD" of Secret "monocle-sample-api", key "PATH" of Secret "monocle-sample-api"`,
				`'[{"op":"remove","path":"/data/LD_PRELOAD"},{"op":"remove","path":"/data/PATH"}]'`},
		},
		// The image sets no locale (nix/default.nix:531-533).
		"LC_ALL": {
			spec: configSpec(t, githubConfig, withUser), related: user(map[string]string{"GITHUB_TOKEN": "t", "LC_ALL": "C.UTF-8"}),
			reason: condition.ReasonVariableRefused, says: []string{`key "LC_ALL"`, "LC_*: as LANG"},
		},
		// Variable names are case-sensitive: Path is not PATH.
		"Path, ld_preload": {
			spec: configSpec(t, githubConfig, withUser), related: user(map[string]string{"GITHUB_TOKEN": "t", "Path": "/tmp", "ld_preload": "x"}),
			reason: "Applied",
		},
		// src/Monocle/Api/Server.hs:311: an empty key is anyone's.
		"CRAWLERS_API_KEY empty in the user's Secret over the generated one's": {
			spec: configSpec(t, githubConfig, withUser), related: user(map[string]string{"GITHUB_TOKEN": "t", "CRAWLERS_API_KEY": ""}),
			reason: condition.ReasonVariableRefused,
			says: []string{`key "CRAWLERS_API_KEY" of Secret "tokens", the crawlers' API key, is empty: anyone reaching the API could add`,
				`'[{"op":"remove","path":"/data/CRAWLERS_API_KEY"}]'`},
		},
		"the key crawlers_api_key names, empty": {
			spec: configSpec(t, named, withUser), related: user(map[string]string{"DEMO_KEY": ""}),
			reason: condition.ReasonVariableRefused, says: []string{`key "DEMO_KEY" of Secret "tokens", the crawlers' API key, is empty`},
		},
		"the key crawlers_api_key names, set": {
			spec: configSpec(t, named, withUser), related: user(map[string]string{"DEMO_KEY": "k"}), reason: "Applied",
		},
		"seven refused keys: five named, the rest later": {
			spec: baseSpec, generated: many, reason: condition.ReasonVariableRefused,
			says: []string{`key "LD_X4" of Secret "monocle-sample-api", and 2 more`, "(the rest are named once these are gone)", `"/data/LD_X4"}]'`},
		},
		"refused keys in both Secrets: the command is the first's": {
			spec: configSpec(t, githubConfig, withUser), generated: map[string]string{"GHCRTS": "-N"}, related: user(map[string]string{"GITHUB_TOKEN": "t", "BASHOPTS": "nullglob"}),
			reason: condition.ReasonVariableRefused,
			says: []string{`key "GHCRTS" of Secret "monocle-sample-api", key "BASHOPTS" of Secret "tokens"`, "(the rest are named once these are gone)",
				`run kubectl -n default patch secret monocle-sample-api --type=json -p '[{"op":"remove","path":"/data/GHCRTS"}]'`},
		},
		// src/CLI.hs:104, 110: pinned, env wins over envFrom.
		"MONOCLE_API_PORT and MONOCLE_CRAWLER_MONITORING in the user's Secret: a note": {
			spec: configSpec(t, githubConfig, withUser), related: user(map[string]string{"GITHUB_TOKEN": "t", "MONOCLE_API_PORT": "9898", "MONOCLE_CRAWLER_MONITORING": "1"}),
			reason: "Applied", says: []string{`key "MONOCLE_API_PORT" of Secret "tokens", key "MONOCLE_CRAWLER_MONITORING" of Secret "tokens": the hook sets it in the pods`},
		},
		// src/Monocle/Client.hs:45-50: any value but "0" is insecure.
		"TLS_NO_VERIFY=false: a note": {
			spec: configSpec(t, githubConfig, withUser), related: user(map[string]string{"GITHUB_TOKEN": "t", "TLS_NO_VERIFY": "false"}),
			reason: "Applied", says: []string{`key TLS_NO_VERIFY of Secret "tokens" is set and not 0: the crawler does not check the certificates`},
		},
		"TLS_NO_VERIFY=0": {
			spec: configSpec(t, githubConfig, withUser), related: user(map[string]string{"GITHUB_TOKEN": "t", "TLS_NO_VERIFY": "0"}), reason: "Applied",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			// Applied's notes are in the message too.
			before, a, c := steadyAfter(t, tc.spec, tc.related, tc.generated, tc.reason, tc.says)
			checkPrinted(t, a.Status.Conditions)
			held := tc.reason != "Applied"
			if !held && len(tc.says) == 0 && strings.Contains(c.Message, "Secret") {
				t.Errorf("a note where none is due: %s", c.Message)
			}
			for _, name := range []string{n.API, n.Crawler} {
				if a.child("Deployment", name) == nil && !held {
					continue // no crawler in baseSpec
				}
				if same := equalJSON(a.child("Deployment", name)["spec"], before.child("Deployment", name)["spec"]); held && !same {
					t.Errorf("%s is not held", name)
				}
			}
			for _, cmd := range command.Pasted(c.Message) {
				if !strings.HasSuffix(cmd, "]'") {
					t.Errorf("a pasted command runs past its end: %s", cmd)
				}
			}
		})
	}

	// A new Monocle gets no API and no crawler until the keys are gone.
	req := fixture(t, "sync-v1-new-parent")
	req.Parent.Spec = json.RawMessage(configSpec(t, githubConfig, withUser))
	req.Related = user(map[string]string{"GITHUB_TOKEN": "t", "GHCRTS": "-M16m"})
	a := decodeAnswer(t, syncJSON(t, req))
	if c := a.Status.Condition(condition.ConditionSpecApplied); c.Reason != condition.ReasonVariableRefused || !strings.Contains(c.Message, "no API (and no crawler) is made") {
		t.Errorf("SpecApplied %+v", c)
	}
	if a.child("Deployment", n.API) != nil || a.child("Deployment", n.Crawler) != nil {
		t.Errorf("a new Monocle with GHCRTS gets %v", a.names())
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
