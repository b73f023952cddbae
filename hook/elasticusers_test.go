package hook

import (
	cryptorand "crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/change-metrics/monocle-hook/hook/child"
	"github.com/change-metrics/monocle-hook/hook/elastic"
	"github.com/change-metrics/monocle-hook/internal/elasticusers"
	"github.com/change-metrics/monocle-hook/internal/fakerealm"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// secretOf decodes a Secret child of an answer.
func secretOf(t *testing.T, a answer, name string) *corev1.Secret {
	t.Helper()
	raw := a.child("Secret", name)
	if raw == nil {
		t.Fatalf("no Secret %s in %v", name, a.names())
	}
	var s corev1.Secret
	remarshal(t, raw, &s)
	return &s
}

// The Secret N-elastic holds a file realm Elasticsearch reads: each user's
// password verifies against its hash there, as Hasher.PBKDF2 does, under
// the roles of internal/elasticusers; each client's URL carries its own
// user. Synced again, nothing changes (the hashes are made once); a new
// password is hashed again and rolls the API, whose URL carries it, and not
// Elasticsearch, whose file realm reloads the file.
func TestElasticUsers(t *testing.T) {
	n := instance.For("monocle-sample")
	c := converged(t)
	first := decodeAnswer(t, syncJSON(t, c.request(t)))
	users := secretOf(t, first, n.Elastic)
	realm, err := fakerealm.New(string(users.Data["users"]), string(users.Data["users_roles"]), string(users.Data["roles.yml"]))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range elasticusers.All {
		password := users.Data[u.Name+".password"]
		if len(password) != 24 || strings.Trim(string(password), child.KeyAlphabet) != "" {
			t.Errorf("%s's password is not 24 letters and digits", u.Name)
		}
		req := basicAuthRequest(u.Name, string(password))
		if user, status := realm.Authenticate(req); user != u.Name || status != 200 {
			t.Errorf("%s does not log in with its password: %d", u.Name, status)
		}
	}
	for _, u := range []elasticusers.User{elasticusers.Monocle, elasticusers.Snapshots} {
		want := "http://" + u.Name + ":" + string(users.Data[u.Name+".password"]) + "@monocle-sample-elastic:9200"
		if got := string(users.Data[elasticusers.URLKey(u)]); got != want {
			t.Errorf("%s's URL %q", u.Name, got)
		}
	}
	if got := string(users.Data["probe.netrc"]); got != "machine 127.0.0.1 login monocle-probe password "+string(users.Data["monocle-probe.password"])+"\n" {
		t.Errorf("probe.netrc %q", got)
	}
	// The fixed point: synced again with fresh randomness (the tests'
	// Env repeats its own), the same answer: nothing is hashed again.
	fresh := testEnv()
	fresh.Rand = cryptorand.Reader
	resp, err := Sync(c.request(t), fresh)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(resp)
	if before, _ := json.Marshal(first.Children); string(before) != childrenJSON(t, again) {
		t.Error("synced again, the answer changed")
	}

	// A password that could split a URL or the wrapper's arguments (an
	// admin's edit) is made anew, of letters and digits.
	for _, bad := range []string{"with space and @:/ in it", "short", "new\nline-in-it-and-more"} {
		req := c.request(t)
		req.Children.Secrets[n.Elastic].Data["monocle-snapshots.password"] = []byte(bad)
		got := secretOf(t, decodeAnswer(t, syncJSON(t, req)), n.Elastic).Data["monocle-snapshots.password"]
		if string(got) == bad || len(got) != 24 || strings.Trim(string(got), child.KeyAlphabet) != "" {
			t.Errorf("password %q kept as %q", bad, got)
		}
	}

	// The users file edited, its sum left as it was (a writer of the
	// Secret's): each hash is checked against its password, so an added
	// user, a hash of another password or a costlier count is rewritten.
	other, err := elasticusers.Hash([]byte("notThePasswordOfMonocle24"), cryptorand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	good := string(users.Data["users"])
	monocleLine, _, _ := strings.Cut(good, "\n")
	for name, edited := range map[string]string{
		"a user added":       good + "intruder:" + other + "\n",
		"a hash replaced":    strings.Replace(good, monocleLine, "monocle:"+other, 1),
		"a user removed":     strings.SplitAfterN(good, "\n", 2)[1],
		"a count of its own": strings.Replace(good, "{PBKDF2}1000$", "{PBKDF2}1000000$", 1),
	} {
		req := c.request(t)
		req.Children.Secrets[n.Elastic].Data["users"] = []byte(edited)
		got := secretOf(t, decodeAnswer(t, syncJSON(t, req)), n.Elastic).Data["users"]
		if string(got) == edited {
			t.Errorf("%s: the users file kept", name)
		}
		realm, err := fakerealm.New(string(got), string(users.Data["users_roles"]), string(users.Data["roles.yml"]))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, u := range elasticusers.All {
			if user, _ := realm.Authenticate(basicAuthRequest(u.Name, string(users.Data[u.Name+".password"]))); user != u.Name {
				t.Errorf("%s: %s does not log in with its password", name, u.Name)
			}
		}
		if strings.Contains(string(got), "intruder") {
			t.Errorf("%s: the added user kept", name)
		}
	}

	// A new password (an admin's): hashed again, the API rolls.
	c.children["Secret.v1"][n.Elastic]["data"].(map[string]any)["monocle.password"] = base64.StdEncoding.EncodeToString([]byte("anAdminsNewPassword2026"))
	after := decodeAnswer(t, syncJSON(t, c.request(t)))
	users2 := secretOf(t, after, n.Elastic)
	realm2, err := fakerealm.New(string(users2.Data["users"]), string(users2.Data["users_roles"]), string(users2.Data["roles.yml"]))
	if err != nil {
		t.Fatal(err)
	}
	if user, _ := realm2.Authenticate(basicAuthRequest("monocle", "anAdminsNewPassword2026")); user != "monocle" {
		t.Error("the new password does not log in")
	}
	if !strings.Contains(string(users2.Data[elasticusers.URLKey(elasticusers.Monocle)]), ":anAdminsNewPassword2026@") {
		t.Error("the API's URL does not carry the new password")
	}
	if equalJSON(after.child("Deployment", n.API)["spec"], first.child("Deployment", n.API)["spec"]) {
		t.Error("the API does not roll onto the new password")
	}
	if !equalJSON(after.child("StatefulSet", n.Elastic)["spec"], first.child("StatefulSet", n.Elastic)["spec"]) {
		t.Error("Elasticsearch rolls on a new password: its file realm reloads the file")
	}
}

func childrenJSON(t *testing.T, body []byte) string {
	t.Helper()
	b, _ := json.Marshal(decodeAnswer(t, body).Children)
	return string(b)
}

// No password reaches a child but the Secret N-elastic: each client reads
// its URL through a secretKeyRef, the probe its credentials from a file.
func TestElasticPasswordsOnlyInTheSecret(t *testing.T) {
	n := instance.For("monocle-sample")
	// A new Monocle with snapshots: every kind of child that reads a URL.
	req := fixture(t, "sync-v1-new-parent")
	req.Parent.Spec = json.RawMessage(withSpec(t, `{"elasticsearch":{"snapshots":{"schedule":"@daily","keep":3}}}`))
	a := decodeAnswer(t, syncJSON(t, req))
	users := secretOf(t, a, n.Elastic)
	for _, child := range a.Children {
		if child["kind"] == "Secret" && nestedString(child, "metadata", "name") == n.Elastic {
			continue
		}
		b, _ := json.Marshal(child)
		for _, u := range elasticusers.All {
			if p := string(users.Data[u.Name+".password"]); strings.Contains(string(b), p) {
				t.Errorf("%s %s holds %s's password", child["kind"], nestedString(child, "metadata", "name"), u.Name)
			}
		}
	}
	// The API (through its proxy, which alone mounts the key) and the
	// snapshot CronJob read their own user's URL.
	for kind, read := range map[string]string{
		"Deployment/" + n.API:    `"initContainers":[{"command":["/monocle-hook","elastic-proxy"],"env":[{"name":"MONOCLE_ELASTIC_URL","valueFrom":{"secretKeyRef":{"key":"monocle.url","name":"` + n.Elastic + `"}}}]`,
		"CronJob/" + n.Snapshots: `"secretKeyRef":{"key":"monocle-snapshots.url","name":"` + n.Elastic + `"}`,
	} {
		kind, name, _ := strings.Cut(kind, "/")
		if b, _ := json.Marshal(a.child(kind, name)); !strings.Contains(string(b), read) {
			t.Errorf("%s %s does not read %s", kind, name, read)
		}
	}
}

func basicAuthRequest(user, password string) *http.Request {
	req := httptest.NewRequest("GET", "/_cluster/health", nil)
	req.SetBasicAuth(user, password)
	return req
}

// Elasticsearch's readiness probe (ready while the cluster is red: the fake
// node's cluster is) and docs/snapshots.md's command that lists
// snapshots in its pod authenticate as the probe user, with the
// credentials curl reads from the mounted probe.netrc: run here with curl
// against a fake node on loopback whose realm is the Secret's, in place of
// the pod's 127.0.0.1:9200.
func TestProbeAuthenticates(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("no curl here: the probe's command is not run")
	}
	n := instance.For("monocle-sample")
	a := decodeAnswer(t, syncJSON(t, fixture(t, "sync-v1-new-parent")))
	users := secretOf(t, a, n.Elastic)
	realm, err := fakerealm.New(string(users.Data["users"]), string(users.Data["users_roles"]), string(users.Data["roles.yml"]))
	if err != nil {
		t.Fatal(err)
	}
	node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		action := map[string]string{"/": "cluster:monitor/main", "/_cluster/health": "cluster:monitor/health", "/_cat/snapshots/monocle": "cluster:admin/snapshot/get"}[r.URL.Path]
		switch user, status := realm.Authenticate(r); {
		case status != 200:
			w.WriteHeader(status)
		case action == "" || !realm.Allowed(user, action, ""):
			w.WriteHeader(403)
		case r.URL.Path == "/_cluster/health" && r.URL.Query().Has("wait_for_status"):
			// A red cluster: the health that waits for yellow times out.
			w.WriteHeader(408)
		}
	}))
	defer node.Close()
	dir := t.TempDir()
	// The mounted file, as the pod sees it; the fake in the pod's place.
	if err := os.WriteFile(filepath.Join(dir, "probe.netrc"), users.Data["probe.netrc"], 0o600); err != nil {
		t.Fatal(err)
	}
	var sts struct {
		Spec struct {
			Template struct {
				Spec corev1.PodSpec `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	remarshal(t, a.child("StatefulSet", n.Elastic), &sts)
	probe := sts.Spec.Template.Spec.Containers[0].ReadinessProbe.Exec.Command
	if probe[0] != "curl" {
		t.Fatalf("probe %q", probe)
	}
	// docs/snapshots.md's (Restore), after `kubectl -n NS exec N-elastic-0 -c elastic --`.
	readmeText, err := os.ReadFile("../docs/snapshots.md")
	if err != nil {
		t.Fatal(err)
	}
	const exec0 = "kubectl -n NS exec N-elastic-0 -c elastic -- "
	_, readme, ok := strings.Cut(string(readmeText), exec0)
	readme, _, _ = strings.Cut(readme, "`")
	if !ok {
		t.Fatalf("docs/snapshots.md prints no %q", exec0)
	}
	run := func(args []string) ([]byte, error) {
		var local []string
		for _, a := range args[1:] {
			a = strings.Trim(a, "'")
			a = strings.ReplaceAll(a, elastic.UsersDir, dir)
			local = append(local, strings.ReplaceAll(a, "http://127.0.0.1:9200", node.URL))
		}
		return exec.Command(curl, local...).CombinedOutput()
	}
	for name, args := range map[string][]string{"the readiness probe": probe, "docs/snapshots.md's snapshot list": strings.Fields(readme)} {
		if out, err := run(args); err != nil {
			t.Errorf("%s: %v %s", name, err, out)
		}
	}
	// With a wrong password, refused: the probe fails.
	if err := os.WriteFile(filepath.Join(dir, "probe.netrc"), []byte("machine 127.0.0.1 login monocle-probe password wrong\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := run(probe); err == nil {
		t.Errorf("the probe passes with a wrong password: %s", out)
	}
}
