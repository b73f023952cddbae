package elasticusers

import (
	"bytes"
	"strings"
	"testing"
)

// The hash Elasticsearch 7.17's Hasher.PBKDF2 verifies: a known answer
// computed outside Go too (the research for issue 37 checked it in Python
// and in a Java copy of Hasher's verify), for password s3cret-Passw0rd,
// salt 0x00..0x1f and 10000 iterations.
func TestHashKnownAnswer(t *testing.T) {
	salt := make([]byte, 32)
	for i := range salt {
		salt[i] = byte(i)
	}
	got, err := hash([]byte("s3cret-Passw0rd"), salt, 10000)
	if err != nil {
		t.Fatal(err)
	}
	const want = "{PBKDF2}10000$AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=$BtZnE2Gmf/EsWVf9a//b1kR7irNcmIbUxDY9GEw5vds="
	if got != want {
		t.Errorf("Hash = %s, want %s", got, want)
	}
	if !Verify([]byte("s3cret-Passw0rd"), want) || Verify([]byte("s3cret-Passw0rd!"), want) {
		t.Error("Verify does not tell the password from another")
	}
	// Hash writes the same, at Cost.
	mine, err := Hash([]byte("s3cret-Passw0rd"), bytes.NewReader(salt))
	if err != nil || !strings.HasPrefix(mine, "{PBKDF2}1000$AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=$") || !Verify([]byte("s3cret-Passw0rd"), mine) {
		t.Errorf("Hash = %s, %v", mine, err)
	}
	// Hasher knows only its own iteration counts.
	if Verify([]byte("s3cret-Passw0rd"), strings.Replace(want, "10000$", "10001$", 1)) {
		t.Error("Verify took an iteration count Hasher does not know")
	}
}

// Every role a user names is in roles.yml, at a line's start (FileRolesStore
// cuts the file at unindented lines), and no user is one of the reserved
// realm's (FileUserPasswdStore refuses those while it is on).
func TestUsersAndRoles(t *testing.T) {
	reserved := []string{"elastic", "kibana", "kibana_system", "logstash_system", "beats_system", "apm_system", "remote_monitoring_user"}
	for _, u := range All {
		if !strings.Contains("\n"+Roles, "\n"+u.Role+":\n") {
			t.Errorf("role %s of %s is not in roles.yml", u.Role, u.Name)
		}
		for _, r := range reserved {
			if u.Name == r {
				t.Errorf("%s is a reserved user", u.Name)
			}
		}
		if strings.ContainsAny(u.Name, ":@/?#%") {
			t.Errorf("%s cannot be a URL's user", u.Name)
		}
	}
	if got := UsersRoles(); got != "monocle:monocle\nmonocle_snapshots:monocle-snapshots\nmonocle_probe:monocle-probe\n" {
		t.Errorf("users_roles %q", got)
	}
}

// What a new Monocle's users cost the hook: three of these per sync until
// the Secret N-elastic is observed (BENCHMARKS.md).
func BenchmarkHash(b *testing.B) {
	password := []byte("abcdefghijklmnopqrstuvwx")
	for b.Loop() {
		if _, err := Hash(password, bytes.NewReader(make([]byte, 32))); err != nil {
			b.Fatal(err)
		}
	}
}
