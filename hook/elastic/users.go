package elastic

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/hook/child"
	"github.com/change-metrics/monocle-hook/internal/elasticusers"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// Keys of the Secret N-elastic, beside each user's "<name>.password".
const (
	usersFile      = "users"
	usersRolesFile = "users_roles"
	rolesFile      = "roles.yml"
	// usersSum is the SHA-256 of the passwords the users file was hashed
	// from: their hashes are made again only when it no longer matches (a
	// fresh salt on every sync would change every answer and roll
	// Elasticsearch forever). It tells nothing the passwords beside it do
	// not.
	usersSum = "users.sha256"
	// probeNetrc is the probe user's credentials, as curl reads them
	// (--netrc-file): never on a command line.
	probeNetrc = "probe.netrc"
)

func passwordKey(u elasticusers.User) string { return u.Name + ".password" }

// usersData keeps every observed key of the Secret N-elastic,
// generates the passwords that are missing (letters and digits: they pass
// through URLs and the image's wrapper unquoted), and makes the file realm's
// files from them: the hashes only when a password is new or changed.
func usersData(n instance.Names, observed *corev1.Secret, random io.Reader) (map[string][]byte, error) {
	data := map[string][]byte{}
	if observed != nil {
		maps.Copy(data, observed.Data)
	}
	sum := sha256.New()
	for _, u := range elasticusers.All {
		if !usablePassword(data[passwordKey(u)]) {
			password, err := child.RandomKey(random, 24)
			if err != nil {
				return nil, fmt.Errorf("generating the password of %s: %w", u.Name, err)
			}
			data[passwordKey(u)] = password
		}
		fmt.Fprintf(sum, "%s:%s\n", u.Name, data[passwordKey(u)])
	}
	if hexSum := hex.EncodeToString(sum.Sum(nil)); string(data[usersSum]) != hexSum || !usersFileVerifies(data) {
		var users strings.Builder
		for _, u := range elasticusers.All {
			hash, err := elasticusers.Hash(data[passwordKey(u)], random)
			if err != nil {
				return nil, fmt.Errorf("hashing the password of %s: %w", u.Name, err)
			}
			fmt.Fprintf(&users, "%s:%s\n", u.Name, hash)
		}
		data[usersFile], data[usersSum] = []byte(users.String()), []byte(hexSum)
	}
	data[usersRolesFile] = []byte(elasticusers.UsersRoles())
	data[rolesFile] = []byte(elasticusers.Roles)
	for _, u := range []elasticusers.User{elasticusers.Monocle, elasticusers.Snapshots} {
		data[elasticusers.URLKey(u)] = []byte(fmt.Sprintf("http://%s:%s@%s:%d", u.Name, data[passwordKey(u)], n.Elastic, instance.ElasticPort))
	}
	data[probeNetrc] = []byte(fmt.Sprintf("machine 127.0.0.1 login %s password %s\n", elasticusers.Probe.Name, data[passwordKey(elasticusers.Probe)]))
	return data, nil
}

// usersFileVerifies: the users file is exactly our users, in order, each
// hash verifying its password at our Cost (a writer of the Secret who
// edits the file but not its sum, or adds a user, gets it rewritten; the
// cost is fixed so that a file's count cannot make the hook spend more
// than three hashes' time on each sync, about 1.3 ms, BENCHMARKS.md).
func usersFileVerifies(data map[string][]byte) bool {
	lines := strings.Split(strings.TrimSuffix(string(data[usersFile]), "\n"), "\n")
	if len(lines) != len(elasticusers.All) {
		return false
	}
	prefix := "{PBKDF2}" + strconv.Itoa(elasticusers.Cost) + "$"
	for i, u := range elasticusers.All {
		hash, ok := strings.CutPrefix(lines[i], u.Name+":")
		if !ok || !strings.HasPrefix(hash, prefix) || !elasticusers.Verify(data[passwordKey(u)], hash) {
			return false
		}
	}
	return true
}

// usablePassword: a password kept as it is, an admin's too. It reaches
// Monocle inside a URL (userinfo), the janitor's arguments through the
// image's unquoted $* wrapper, and curl's netrc: anything but 16 to 128
// letters and digits could split, re-route or add to them, so it is made
// anew instead.
func usablePassword(p []byte) bool {
	return len(p) >= 16 && len(p) <= 128 && strings.Trim(string(p), child.KeyAlphabet) == ""
}

// Where Elasticsearch reads its config, and where its users are mounted.
const (
	elasticConfigDir    = "/usr/share/elasticsearch/config"
	elasticConfigVolume = "elastic-config"
	UsersDir            = "/mnt/elastic-users"
	elasticUsersVolume  = "elastic-users"
)

// withElasticUsers gives Elasticsearch's pod its users. Mounting the Secret
// over the config directory would hide the image's own files, and a subPath
// mount never sees an update; so, as ECK does, an init container copies
// the image's config directory into an emptyDir that Elasticsearch mounts
// in its place, and links the file realm's files there to the mounted
// Secret, whose updates Elasticsearch then reads (its file realm watches
// the files).
func withElasticUsers(n instance.Names, pod corev1.PodSpec, image string) corev1.PodSpec {
	links := ""
	for _, f := range []string{usersFile, usersRolesFile, rolesFile} {
		links += " && ln -sf " + UsersDir + "/" + f + " /mnt/config/" + f
	}
	initC := corev1.Container{
		Name:    "config",
		Image:   image,
		Command: []string{"bash", "-c", "set -e; cp -R " + elasticConfigDir + "/. /mnt/config/" + links},
		// Copies a few files.
		Resources:       instance.Resources("10m", "32Mi", "64Mi"),
		SecurityContext: pod.Containers[0].SecurityContext,
		VolumeMounts: []corev1.VolumeMount{
			{Name: elasticConfigVolume, MountPath: "/mnt/config"},
			{Name: elasticUsersVolume, MountPath: UsersDir, ReadOnly: true},
		},
	}
	pod.InitContainers = []corev1.Container{initC}
	pod.Volumes = append(pod.Volumes,
		// No source: an emptyDir, the API server's default.
		corev1.Volume{Name: elasticConfigVolume},
		corev1.Volume{Name: elasticUsersVolume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: n.Elastic,
			Items: []corev1.KeyToPath{
				{Key: usersFile, Path: usersFile}, {Key: usersRolesFile, Path: usersRolesFile},
				{Key: rolesFile, Path: rolesFile}, {Key: probeNetrc, Path: probeNetrc},
			},
			// Read by Elasticsearch's user, through the pod's fsGroup.
			DefaultMode: ptr.To(int32(0o440)),
		}}},
	)
	return pod
}
