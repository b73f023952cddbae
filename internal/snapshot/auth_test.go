package snapshot

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/change-metrics/monocle-hook/internal/elasticusers"
	"github.com/change-metrics/monocle-hook/internal/fakerealm"
)

// secured turns security on in the fake with the hook's users and roles
// (internal/elasticusers: what the Secret N-elastic holds), each with a
// password of its own; it returns the passwords.
func secured(t *testing.T, f *fakeES) map[elasticusers.User]string {
	t.Helper()
	passwords := map[elasticusers.User]string{}
	var users bytes.Buffer
	for _, u := range elasticusers.All {
		passwords[u] = rand.Text()
		hash, err := elasticusers.Hash([]byte(passwords[u]), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&users, "%s:%s\n", u.Name, hash)
	}
	realm, err := fakerealm.New(users.String(), elasticusers.UsersRoles(), elasticusers.Roles)
	if err != nil {
		t.Fatal(err)
	}
	f.realm = realm
	return passwords
}

// clientAs talks to the fake with a user's credentials in the URL, as the
// CronJob's and the restore Job's MONOCLE_ELASTIC_URL carries them.
func clientAs(t *testing.T, f *fakeES, user, password string) *Client {
	t.Helper()
	u, _ := url.Parse(f.server.URL)
	u.User = url.UserPassword(user, password)
	c, err := NewClient(u.String())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The snapshot and restore paths pass a secured node as the snapshot
// user; without its credentials, with a wrong password, or as another
// user, they are refused, and no error shows a password.
func TestSecuredPaths(t *testing.T) {
	t.Run("snapshot and restore as the snapshot user", func(t *testing.T) {
		f := newFakeES(t)
		pw := secured(t, f)
		withMonocle(f)
		c := clientAs(t, f, elasticusers.Snapshots.Name, pw[elasticusers.Snapshots])
		taken, err := Take(context.Background(), c, testOptions(3))
		if err != nil {
			t.Fatalf("Take: %v", err)
		}
		if _, err := Restore(context.Background(), c, RestoreOptions{Repository: "monocle", Location: DefaultLocation, Snapshot: taken.Snapshot, Log: quiet()}); err != nil {
			t.Fatalf("Restore: %v", err)
		}
	})
	for name, tc := range map[string]struct {
		user     elasticusers.User
		password func(map[elasticusers.User]string) string
		status   string
	}{
		"the API's user":   {elasticusers.Monocle, func(pw map[elasticusers.User]string) string { return pw[elasticusers.Monocle] }, "403 security_exception"},
		"the probe's user": {elasticusers.Probe, func(pw map[elasticusers.User]string) string { return pw[elasticusers.Probe] }, "403 security_exception"},
		"a wrong password": {elasticusers.Snapshots, func(pw map[elasticusers.User]string) string { return pw[elasticusers.Monocle] }, "401 security_exception"},
		"no credentials":   {elasticusers.User{}, nil, "401 security_exception"},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFakeES(t)
			pw := secured(t, f)
			withMonocle(f)
			c := f.client()
			secret := ""
			if tc.password != nil {
				secret = tc.password(pw)
				c = clientAs(t, f, tc.user.Name, secret)
			}
			_, err := Take(context.Background(), c, testOptions(3))
			var esErr *Error
			if !errors.As(err, &esErr) || !strings.Contains(err.Error(), tc.status) {
				t.Fatalf("Take: %v, want %s", err, tc.status)
			}
			for _, p := range pw {
				if strings.Contains(err.Error(), p) {
					t.Errorf("the error shows a password: %v", err)
				}
			}
		})
	}
}

// The readiness probe's user reads the cluster's health and may list
// snapshots (the docs' command), nothing else of the snapshot user's.
func TestProbeUser(t *testing.T) {
	f := newFakeES(t)
	pw := secured(t, f)
	withMonocle(f)
	c := clientAs(t, f, elasticusers.Probe.Name, pw[elasticusers.Probe])
	for _, call := range []struct {
		method, path string
		ok           bool
	}{
		{"GET", "/_cluster/health/monocle.*", true},
		{"GET", "/_snapshot/monocle/_all", true},
		{"PUT", "/_snapshot/monocle/x", false},
		{"POST", "/monocle.config/_close", false},
	} {
		err := c.call(context.Background(), call.method, call.path, nil, nil, nil, false)
		var esErr *Error
		refused := errors.As(err, &esErr) && esErr.Status == 403
		if refused == call.ok {
			t.Errorf("%s %s as the probe: %v", call.method, call.path, err)
		}
	}
}

// `monocle-hook snapshot` and `restore`, run as the CronJob and the
// restore Job run them (the URL with the snapshot user's credentials in
// --elastic), print neither the password nor the URL: their pods' logs
// are readable by the `view` role.
func TestCommandsPrintNoCredentials(t *testing.T) {
	f := newFakeES(t)
	pw := secured(t, f)
	withMonocle(f)
	u, _ := url.Parse(f.server.URL)
	u.User = url.UserPassword(elasticusers.Snapshots.Name, pw[elasticusers.Snapshots])
	now := func() time.Time { return time.Date(2026, 12, 5, 17, 0, 0, 0, time.UTC) }
	var log bytes.Buffer
	if err := RunSnapshot(context.Background(), []string{"--elastic", u.String(), "--repository", "monocle", "--location", DefaultLocation, "--keep", "1"}, &log, now); err != nil {
		t.Fatalf("snapshot: %v\n%s", err, log.String())
	}
	if err := RunRestore(context.Background(), []string{"--elastic", u.String(), "--repository", "monocle", "--location", DefaultLocation, "--snapshot", "monocle-20261205-170000"}, &log); err != nil {
		t.Fatalf("restore: %v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "snapshot taken") {
		t.Fatalf("the log does not say the snapshot was taken:\n%s", log.String())
	}
	if strings.Contains(log.String(), pw[elasticusers.Snapshots]) || strings.Contains(log.String(), u.String()) {
		t.Errorf("the log shows the credentials:\n%s", log.String())
	}
}
