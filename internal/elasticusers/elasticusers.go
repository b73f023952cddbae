// Package elasticusers is who may use the Elasticsearch the hook runs: its
// file realm's users, each client of Elasticsearch its own, with the least
// role that works, and their password hashes as Elasticsearch 7.17 reads
// them. The hook writes them into the Secret N-elastic; the fake
// Elasticsearch of the tests checks requests against them.
package elasticusers

import (
	"crypto/pbkdf2"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// User is one user of the file realm.
type User struct {
	Name, Role string
}

// The users, in the order the files list them.
var (
	// Monocle is Monocle's API and its janitor (the update-idents Job,
	// kubectl monocle janitor's Jobs). Monocle's crawler never reaches Elasticsearch.
	Monocle = User{"monocle", "monocle"}
	// Snapshots is the snapshot CronJob's and the restore Job's.
	Snapshots = User{"monocle-snapshots", "monocle_snapshots"}
	// Probe is Elasticsearch's readiness probe's, which may only read the
	// cluster's health (and list snapshots, for the docs' command).
	Probe = User{"monocle-probe", "monocle_probe"}
	All   = []User{Monocle, Snapshots, Probe}
)

// Roles is roles.yml (Elasticsearch 7.17's file roles; a role name at the
// line's start, its body indented: FileRolesStore), the least each client
// needs. Monocle's indices are monocle.config and monocle.changes.1.<its
// workspace> (src/Monocle/Env.hs:53-66, src/Monocle/Backend/Index.hs:266).
//
//   - monocle: Monocle 1.11.2's API and janitor create their indices, put
//     mappings and settings, refresh, index, update, search, scroll, count
//     and delete by query (src/Monocle/Effects.hs:435-507 through
//     bloodhound 0.19 and src/Database/Bloodhound/Raw.hs); no cluster call.
//   - monocle_snapshots: the snapshot and restore commands
//     (internal/snapshot) register and read the fs repository, create, list,
//     delete and restore snapshots (cluster:admin/snapshot/*: the 7.17
//     reference asks the cluster's manage for restore; these actions are
//     all it does), read the cluster's health, and list, close and open
//     Monocle's indices (manage on them).
//   - monocle_probe: the readiness probe reads the cluster's health; and
//     it may list snapshots, for the docs' command run in the pod.
const Roles = `monocle:
  indices:
    - names: ["monocle.*"]
      privileges: ["read", "write", "manage"]
monocle_snapshots:
  cluster: ["cluster:admin/repository/put", "cluster:admin/repository/get", "cluster:admin/snapshot/*", "monitor"]
  indices:
    - names: ["monocle.*"]
      privileges: ["manage"]
monocle_probe:
  cluster: ["monitor", "cluster:admin/repository/get", "cluster:admin/snapshot/get"]
`

// URLKey is the key of the Secret N-elastic holding the URL, with u's
// credentials, that a client of Elasticsearch reads (through a
// secretKeyRef: nothing prints it).
func URLKey(u User) string { return u.Name + ".url" }

// URLEnv is MONOCLE_ELASTIC_URL of u, read from the Secret secret (the
// Monocle's N-elastic): a container's arguments name it as
// $(MONOCLE_ELASTIC_URL), which the kubelet expands, so that no field
// but the Secret's holds the credentials.
func URLEnv(secret string, u User) corev1.EnvVar {
	return corev1.EnvVar{Name: "MONOCLE_ELASTIC_URL", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: URLKey(u)}}}
}

// ReadsURL: one of containers reads MONOCLE_ELASTIC_URL from the key of u
// in the Secret secret, as URLEnv writes it: its process reaches
// Elasticsearch with u's credentials.
func ReadsURL(containers []corev1.Container, secret string, u User) bool {
	for _, c := range containers {
		for _, e := range c.Env {
			if e.Name == "MONOCLE_ELASTIC_URL" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil &&
				e.ValueFrom.SecretKeyRef.Name == secret && e.ValueFrom.SecretKeyRef.Key == URLKey(u) {
				return true
			}
		}
	}
	return false
}

// UsersRoles is the users_roles file: role:user, a line each.
func UsersRoles() string {
	var b strings.Builder
	for _, u := range All {
		fmt.Fprintf(&b, "%s:%s\n", u.Role, u.Name)
	}
	return b.String()
}

// Cost is the iteration count of the hashes: the least Hasher knows
// (Hasher accepts 1000, 10000, 50000, 100000, 500000 and 1000000 only).
// The passwords are random (24 letters and digits, about 143 bits): no
// count makes them harder to guess, and each count costs the hook its
// time, three hashes for each new Monocle (BENCHMARKS.md).
const Cost = 1000

const pbkdf2Prefix = "{PBKDF2}"

// Hash is password as Elasticsearch 7.17's Hasher.PBKDF2 writes it:
// {PBKDF2}COST$base64(32 bytes of salt)$base64(PBKDF2-HMAC-SHA512, 32
// bytes), the password UTF-8 encoded; Hasher reads it from the end (the
// key's 44 characters, then the salt's), so both must be 32 bytes.
func Hash(password []byte, random io.Reader) (string, error) {
	salt := make([]byte, 32)
	if _, err := io.ReadFull(random, salt); err != nil {
		return "", err
	}
	return hash(password, salt, Cost)
}

func hash(password, salt []byte, cost int) (string, error) {
	key, err := pbkdf2.Key(sha512.New, string(password), salt, cost, 32)
	if err != nil {
		return "", err
	}
	return pbkdf2Prefix + strconv.Itoa(cost) + "$" + base64.StdEncoding.EncodeToString(salt) + "$" + base64.StdEncoding.EncodeToString(key), nil
}

// costs are the iteration counts Hasher knows (Hasher.PBKDF2_*).
var costs = []int{1000, 10000, 50000, 100000, 500000, 1000000}

// Verify reports whether password matches hash, a {PBKDF2} hash as
// Elasticsearch's Hasher.PBKDF2 verifies it.
func Verify(password []byte, hash string) bool {
	rest, ok := strings.CutPrefix(hash, pbkdf2Prefix)
	parts := strings.Split(rest, "$")
	if !ok || len(parts) != 3 {
		return false
	}
	cost, err := strconv.Atoi(parts[0])
	salt, err1 := base64.StdEncoding.DecodeString(parts[1])
	want, err2 := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || err1 != nil || err2 != nil || !slices.Contains(costs, cost) || len(salt) != 32 || len(want) != 32 {
		return false
	}
	got, err := pbkdf2.Key(sha512.New, string(password), salt, cost, len(want))
	return err == nil && subtle.ConstantTimeCompare(got, want) == 1
}
