// Package command is every command line the project prints for people to
// paste (in a status condition, in what render, check and the Job
// printers print): Forms lists them, and Line writes one. A value that
// came from a Monocle, its config or its objects is never a path a command
// reads (a command that adds a Secret key from a file names a file of the
// project's own), and every other value is checked to be what it claims (a
// DNS label for a namespace, a Kubernetes name for a name) or quoted for a
// POSIX shell: pasted, the command runs what the project wrote, not what a
// tenant chose. It imports only apimachinery's validation and the standard library.
package command

import (
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Form is one command the project prints, as its words with a placeholder
// (in capitals) for each value: NAMESPACE (a DNS label), NAME (a
// Kubernetes name, a DNS subdomain), KEY (a Secret key), SIZE (a
// quantity), FROM-FILES (--from-file=KEY=./token-N, once or more),
// REMOVE-KEYS (a JSON patch's remove operation of /data/KEY, once or more). A kubectl command may print "-n NAMESPACE" or not (a Monocle
// read from a file has no namespace): the forms spell it always.
type Form struct {
	// Text is the command, one line; a pipe joins two commands.
	Text string
	// By is what prints it.
	By string
}

// Forms is every command the project prints in its messages, the Jobs'
// comments, the CLI's errors and kubectl monocle's (the docs' and the chart's are run by
// e2e/printed_test.go, which lists them).
// TestPrintedCommandsAreForms reads every command out of the hook's
// messages and the Jobs' comments and fails on one that is not here.
var Forms = []Form{
	{By: "CrawlerTokenMissing and LoginSecretMissing (hook/pods/oncerunning.go): FROM-FILES is one --from-file=KEY=./token-N per key, N from 1",
		Text: "kubectl -n NAMESPACE create secret generic NAME FROM-FILES --dry-run=client -o json | kubectl -n NAMESPACE patch secret NAME --type=merge --patch-file=/dev/stdin"},
	{By: "AdminTokenEmpty, LoginKeyTooShort (hook/pods/oncerunning.go), VariableRefused (hook/pods/environment.go): REMOVE-KEYS is {\"op\":\"remove\",\"path\":\"/data/KEY\"}, once or more, joined by commas",
		Text: `kubectl -n NAMESPACE patch secret NAME --type=json -p '[REMOVE-KEYS]'`},
	{By: "VolumeExpansionRequired (hook/elastic/storage.go)",
		Text: `kubectl -n NAMESPACE patch pvc NAME --type merge -p '{"spec":{"resources":{"requests":{"storage":"SIZE"}}}}'`},
	{By: "RecreatingStatefulSet's wait (hook/elastic/elastic.go)",
		Text: `kubectl -n NAMESPACE patch pvc NAME --type json -p '[{"op":"remove","path":"/metadata/ownerReferences"}]'`},
	{By: "NoRecentSnapshot, NoRunDueYet, SnapshotSucceeded: the last run failed (hook/elastic/snapshots_status.go); kubectl monocle janitor's, backup's and restore's failure (kubectl-monocle)",
		Text: "kubectl -n NAMESPACE logs job/NAME"},
	{By: "check's error on input without a Monocle, and its usage (check.go, main.go)",
		Text: "kubectl get monocles,configmaps,secrets -A -o yaml"},
	{By: "check's and render's error on input over their limit (main.go)", Text: "kubectl monocle check -A"},
	{By: "kubectl monocle restore, interrupted (kubectl-monocle/internal/restore/restore.go): resume", Text: "kubectl monocle restore NAME -n NAMESPACE --snapshot NAME"},
	{By: "kubectl monocle restore, interrupted, and backup during a restore (kubectl-monocle): undo", Text: "kubectl monocle restore NAME -n NAMESPACE --undo"},
	{By: "kubectl monocle restore, a record it cannot check (kubectl-monocle/internal/restore/restore.go): undo with explicit values, the defaults shown",
		Text: "kubectl monocle restore NAME -n NAMESPACE --undo --api-replicas 1 --crawler-enabled=true --snapshots-suspend=false"},
	{By: "kubectl monocle restore, update-idents failed (kubectl-monocle/internal/restore/restore.go)", Text: "kubectl monocle janitor NAME update-idents -n NAMESPACE"},
	{By: "kubectl monocle janitor, a record it cannot check (kubectl-monocle/internal/janitor/janitor.go)", Text: "kubectl -n NAMESPACE annotate monocle NAME monocle.monocle.change-metrics.io/janitor-"},
	{By: "backup's refusal of a CronJob that drifts, and kubectl monocle check's ChildDrift (kubectl-monocle): put a child back; KIND is one that runs pods",
		Text: "kubectl -n NAMESPACE delete KIND NAME"},
}

// Namespace reports whether ns may be printed as a namespace: a DNS label,
// as the API server holds every namespace's name to.
func Namespace(ns string) bool { return len(validation.IsDNS1123Label(ns)) == 0 }

// Name reports whether name may be printed as an object's name: a DNS
// subdomain, the rule of the names the commands take (Secrets, claims,
// Jobs, Monocles).
func Name(name string) bool { return len(validation.IsDNS1123Subdomain(name)) == 0 }

// Key reports whether key may be printed as a Secret's key.
func Key(key string) bool { return len(validation.IsConfigMapKey(key)) == 0 }

// Kubectl is the words "kubectl -n NAMESPACE", or "kubectl" for none (a
// Monocle read from a file is in kubectl's current namespace); ok is false
// when ns is not a DNS label: no command is then printed.
func Kubectl(ns string) (words []string, ok bool) {
	if ns == "" {
		return []string{"kubectl"}, true
	}
	return []string{"kubectl", "-n", ns}, Namespace(ns)
}

// Line joins words into one command line, each word as it is when a POSIX
// shell reads it as itself, else single-quoted: no word expands, splits,
// redirects or ends the command, whatever it holds.
func Line(words ...string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = Quote(w)
	}
	return strings.Join(quoted, " ")
}

// Quote is w as one word of a POSIX shell: as it is when it holds only
// characters the shell gives no meaning to, else in single quotes, in which
// the shell reads every character but the single quote as itself (one is
// written as four characters: quote, backslash, quote, quote).
func Quote(w string) string {
	if w != "" && strings.Trim(w, plain) == "" {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// plain are the characters a POSIX shell reads as themselves in a word
// that is not a command's first (where '=' would make an assignment; every
// command's first word is its program). '~' is not among them: a shell
// expands it at a word's start and, in bash, after '=' too.
const plain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./,:=@%+"

// Pasted are the commands a message tells its reader to run, as a reader
// copies them: from "run " to the end of the message, or to the aside in
// parentheses after it. Not to the next "; ": a command that holds one runs
// what follows it. The tests paste them.
func Pasted(msg string) []string {
	var cmds []string
	for _, part := range strings.Split(msg, " run ")[1:] {
		cmd, _, _ := strings.Cut(part, " (then ")
		if cmd = strings.TrimPrefix(cmd, ": "); strings.HasPrefix(cmd, "kubectl ") {
			cmds = append(cmds, cmd)
		}
	}
	return cmds
}

// Strip is text without every command of Forms in it: a test reads what is
// left for a command that is not one of them. A form's values match only
// what they claim to be, and "-n NAMESPACE" may be left out.
func Strip(text string) string {
	for _, f := range formPatterns {
		text = f.ReplaceAllString(text, "<command>$1")
	}
	return text
}

var formPatterns = func() []*regexp.Regexp {
	const key = "[-._a-zA-Z0-9]{1,253}"
	values := strings.NewReplacer(
		"REMOVE-KEYS", `\{"op":"remove","path":"/data/`+key+`"\}(?:,\{"op":"remove","path":"/data/`+key+`"\})*`,
		"FROM-FILES", "--from-file="+key+`=\./token-[1-9][0-9]*(?: --from-file=`+key+`=\./token-[1-9][0-9]*)*`,
		"-n NAMESPACE ", "(?:-n [a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])? )?",
		"NAMESPACE", "[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?",
		"NAME", "[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?",
		"KEY", key,
		"KIND", "(?:cronjob|deployment|statefulset|job)",
		"SIZE", `[0-9][0-9.]*(?:[eE][0-9]+|[kMGTPE]i?|[munk])?`,
	)
	var out []*regexp.Regexp
	// The longest first: a form may begin as another does.
	forms := slices.SortedFunc(slices.Values(Forms), func(a, b Form) int { return len(b.Text) - len(a.Text) })
	for _, f := range forms {
		// A command ends where the message goes on (a space, a
		// punctuation mark, a code span's end): a value that only begins
		// as it claims is not taken out.
		out = append(out, regexp.MustCompile(values.Replace(regexp.QuoteMeta(f.Text))+"($|[\\s;),.`])"))
	}
	return out
}()
