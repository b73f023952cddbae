package mcapply

import (
	"encoding/json"
	"testing"
)

func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestUpdate(t *testing.T) {
	tests := map[string]struct {
		observed, desired, wantSpec string
		changed                     bool
	}{
		"server defaults kept, nothing to write": {
			`{"metadata":{"annotations":{"metacontroller.k8s.io/last-applied-configuration":"{\"spec\":{\"ports\":[{\"port\":80}]}}"}},"spec":{"ports":[{"port":80,"protocol":"TCP"}],"clusterIP":"10.0.0.1"}}`,
			`{"spec":{"ports":[{"port":80}]}}`,
			`{"clusterIP":"10.0.0.1","ports":[{"port":80,"protocol":"TCP"}]}`, false,
		},
		"a field no longer desired is removed, an admin's stays": {
			`{"metadata":{"annotations":{"metacontroller.k8s.io/last-applied-configuration":"{\"spec\":{\"a\":1,\"b\":2}}"}},"spec":{"a":1,"b":2,"admin":3}}`,
			`{"spec":{"a":1}}`,
			`{"a":1,"admin":3}`, true,
		},
		"a null removes no server default (Deployment strategy: RollingUpdate to Recreate)": {
			`{"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%"}}}}`,
			`{"spec":{"strategy":{"type":"Recreate","rollingUpdate":null}}}`,
			`{"strategy":{"rollingUpdate":{"maxSurge":"25%"},"type":"Recreate"}}`, true,
		},
		"a field last applied then left out is removed": {
			`{"metadata":{"annotations":{"metacontroller.k8s.io/last-applied-configuration":"{\"spec\":{\"strategy\":{\"type\":\"RollingUpdate\",\"rollingUpdate\":{\"maxSurge\":\"25%\"}}}}"}},"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%"}}}}`,
			`{"spec":{"strategy":{"type":"Recreate"}}}`,
			`{"strategy":{"type":"Recreate"}}`, true,
		},
		"a list without a merge key is replaced whole": {
			`{"spec":{"args":["x","y"],"templates":[{"metadata":{"name":"d"},"extra":1}]}}`,
			`{"spec":{"args":["x"],"templates":[{"metadata":{"name":"d"}}]}}`,
			`{"args":["x"],"templates":[{"metadata":{"name":"d"}}]}`, true,
		},
		"list items merge by name, new ones follow": {
			`{"spec":{"env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]}}`,
			`{"spec":{"env":[{"name":"C","value":"3"},{"name":"A","value":"9"}]}}`,
			`{"env":[{"name":"A","value":"9"},{"name":"B","value":"2"},{"name":"C","value":"3"}]}`, true,
		},
		"system metadata and status are never changed": {
			`{"metadata":{"uid":"u","resourceVersion":"5"},"status":{"ready":1}}`,
			`{"metadata":{"uid":"other","creationTimestamp":null},"status":{}}`,
			`null`, true, // true: the annotation is new
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			observed := obj(t, tc.observed)
			merged, changed, err := Update(observed, obj(t, tc.desired))
			if err != nil {
				t.Fatal(err)
			}
			spec, _ := json.Marshal(merged["spec"])
			if string(spec) != tc.wantSpec || changed != tc.changed {
				t.Errorf("spec %s changed %v, want %s %v", spec, changed, tc.wantSpec, tc.changed)
			}
			md := merged["metadata"].(map[string]any)
			if omd, _ := observed["metadata"].(map[string]any); omd["uid"] != md["uid"] || omd["resourceVersion"] != md["resourceVersion"] {
				t.Errorf("system metadata changed: %v", md)
			}
			if s, _ := json.Marshal(merged["status"]); observed["status"] != nil && string(s) != `{"ready":1}` {
				t.Errorf("status changed: %s", s)
			}
		})
	}
}
