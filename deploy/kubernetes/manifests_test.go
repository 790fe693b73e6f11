package kubernetes

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

type manifests struct {
	sts      []appsv1.StatefulSet
	services []corev1.Service
	pdbs     []policyv1.PodDisruptionBudget
	cms      []corev1.ConfigMap
	secrets  []corev1.Secret
}

// load decodes every document of every manifest strictly (an unknown or
// misspelt field is an error) into its k8s.io/api type.
func load(t *testing.T) manifests {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	var m manifests
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			var head struct{ APIVersion, Kind string }
			if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
				t.Fatalf("%s #%d: %v", f, i, err)
			}
			var into any
			switch head.APIVersion + " " + head.Kind {
			case "apps/v1 StatefulSet":
				m.sts = append(m.sts, appsv1.StatefulSet{})
				into = &m.sts[len(m.sts)-1]
			case "v1 Service":
				m.services = append(m.services, corev1.Service{})
				into = &m.services[len(m.services)-1]
			case "policy/v1 PodDisruptionBudget":
				m.pdbs = append(m.pdbs, policyv1.PodDisruptionBudget{})
				into = &m.pdbs[len(m.pdbs)-1]
			case "v1 ConfigMap":
				m.cms = append(m.cms, corev1.ConfigMap{})
				into = &m.cms[len(m.cms)-1]
			case "v1 Secret":
				m.secrets = append(m.secrets, corev1.Secret{})
				into = &m.secrets[len(m.secrets)-1]
			default:
				t.Fatalf("%s #%d: unexpected %s %s", f, i, head.APIVersion, head.Kind)
			}
			if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
				t.Fatalf("%s #%d (%s): %v", f, i, head.Kind, err)
			}
		}
	}
	if len(m.sts) != 1 || len(m.pdbs) != 1 || len(m.cms) != 1 || len(m.secrets) != 1 || len(m.services) != 2 {
		t.Fatalf("want 1 StatefulSet, 2 Services, 1 PDB, 1 ConfigMap, 1 Secret; have %d %d %d %d %d",
			len(m.sts), len(m.services), len(m.pdbs), len(m.cms), len(m.secrets))
	}
	return m
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// serveSurface scans cmd/warren's sources for serve's flag names and the
// environment variables the binary reads, so a manifest naming one that
// does not exist fails here rather than in a cluster.
func serveSurface(t *testing.T) (flags, env map[string]bool) {
	t.Helper()
	files, _ := filepath.Glob("../../cmd/warren/*.go")
	flags, env = map[string]bool{}, map[string]bool{}
	flagRE := regexp.MustCompile(`(?:Var|VarP)\(&[^,]+, "([a-z0-9-]+)"`)
	boolRE := regexp.MustCompile(`\.(?:Bool|String|Int|Duration)\("([a-z0-9-]+)"`)
	envRE := regexp.MustCompile(`(?:Getenv|envOr|envDuration)\("([A-Z0-9_]+)"`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range flagRE.FindAllSubmatch(data, -1) {
			flags[string(m[1])] = true
		}
		for _, m := range boolRE.FindAllSubmatch(data, -1) {
			flags[string(m[1])] = true
		}
		for _, m := range envRE.FindAllSubmatch(data, -1) {
			env[string(m[1])] = true
		}
	}
	if !flags["node-id"] || !flags["advertise"] || !env["WARREN_META"] {
		t.Fatalf("scan of cmd/warren found flags %v env %v: the scan is broken", len(flags), len(env))
	}
	return flags, env
}

// routes are the API's paths (server/openapi.json, which a server test
// keeps equal to the served routes).
func routes(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile("../../server/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for p, ops := range doc.Paths {
		if _, ok := ops["get"]; ok {
			out[p] = true
		}
	}
	return out
}

func TestManifests(t *testing.T) {
	m := load(t)
	flags, env := serveSurface(t)
	gets := routes(t)
	sts := m.sts[0]
	pod := sts.Spec.Template
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("containers: %d", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]

	t.Run("labels select the pods", func(t *testing.T) {
		sel := sts.Spec.Selector.MatchLabels
		if len(sel) == 0 {
			t.Fatal("StatefulSet has no selector")
		}
		for k, v := range sel {
			if pod.Labels[k] != v {
				t.Fatalf("pod template lacks selector label %s=%s", k, v)
			}
		}
		for _, s := range m.services {
			for k, v := range s.Spec.Selector {
				if pod.Labels[k] != v {
					t.Fatalf("service %s selects %s=%s, which the pods lack", s.Name, k, v)
				}
			}
		}
		for k, v := range m.pdbs[0].Spec.Selector.MatchLabels {
			if pod.Labels[k] != v {
				t.Fatalf("PDB selects %s=%s, which the pods lack", k, v)
			}
		}
		if mu := m.pdbs[0].Spec.MaxUnavailable; mu == nil || mu.IntValue() != 1 {
			t.Fatalf("PDB maxUnavailable %v, want 1 (one node drains at a time)", mu)
		}
	})

	t.Run("headless service names the pods", func(t *testing.T) {
		var headless *corev1.Service
		for i, s := range m.services {
			if s.Name == sts.Spec.ServiceName {
				headless = &m.services[i]
			}
		}
		if headless == nil || headless.Spec.ClusterIP != corev1.ClusterIPNone || !headless.Spec.PublishNotReadyAddresses {
			t.Fatalf("serviceName %q must be a headless Service publishing not-ready pods: %+v", sts.Spec.ServiceName, headless)
		}
		adv := argValue(c.Args, "advertise")
		if !strings.Contains(adv, "$(POD_NAME)."+sts.Spec.ServiceName+".") {
			t.Fatalf("--advertise %q is not the pod's name under the headless service %s", adv, sts.Spec.ServiceName)
		}
		if argValue(c.Args, "node-id") != "$(POD_NAME)" {
			t.Fatalf("--node-id %q, want $(POD_NAME) (pod name = node id)", argValue(c.Args, "node-id"))
		}
	})

	t.Run("args are serve's flags", func(t *testing.T) {
		if len(c.Args) == 0 || c.Args[0] != "serve" {
			t.Fatalf("args %v: want serve first", c.Args)
		}
		for _, a := range c.Args[1:] {
			name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			if !strings.HasPrefix(a, "--") || !flags[name] {
				t.Fatalf("arg %q is not a flag of warren serve", a)
			}
		}
		// $(VAR) in args must be defined in env.
		defined := map[string]bool{}
		for _, e := range c.Env {
			defined[e.Name] = true
		}
		for _, v := range regexp.MustCompile(`\$\(([A-Z_]+)\)`).FindAllStringSubmatch(strings.Join(c.Args, " "), -1) {
			if !defined[v[1]] {
				t.Fatalf("args use $(%s), which the container's env does not define", v[1])
			}
		}
	})

	t.Run("env names are what warren reads", func(t *testing.T) {
		aws := map[string]bool{"AWS_ACCESS_KEY_ID": true, "AWS_SECRET_ACCESS_KEY": true, "AWS_SESSION_TOKEN": true}
		for k := range m.cms[0].Data {
			if !env[k] && !aws[k] {
				t.Fatalf("ConfigMap key %s is no environment variable warren reads", k)
			}
		}
		for k := range m.secrets[0].StringData {
			if !env[k] && !aws[k] {
				t.Fatalf("Secret key %s is no environment variable warren reads", k)
			}
		}
		if m.secrets[0].StringData["WARREN_ADMIN_KEY"] != m.secrets[0].StringData["WARREN_API_KEY"] {
			t.Fatal("WARREN_ADMIN_KEY and WARREN_API_KEY differ: the preStop drain would not be admitted")
		}
		refs := map[string]bool{}
		for _, e := range c.EnvFrom {
			switch {
			case e.ConfigMapRef != nil:
				refs["cm:"+e.ConfigMapRef.Name] = true
			case e.SecretRef != nil:
				refs["secret:"+e.SecretRef.Name] = true
			}
		}
		if !refs["cm:"+m.cms[0].Name] || !refs["secret:"+m.secrets[0].Name] {
			t.Fatalf("container envFrom %v does not load ConfigMap %s and Secret %s", refs, m.cms[0].Name, m.secrets[0].Name)
		}
		if _, ok := m.cms[0].Data["WARREN_LEASE"]; ok {
			if _, err := time.ParseDuration(m.cms[0].Data["WARREN_LEASE"]); err != nil {
				t.Fatalf("WARREN_LEASE: %v", err)
			}
		}
		for _, k := range []string{"WARREN_META", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
			if _, ok := m.secrets[0].StringData[k]; !ok {
				t.Fatalf("Secret lacks %s", k)
			}
		}
	})

	t.Run("probes hit real endpoints on the served port", func(t *testing.T) {
		port := ""
		for _, p := range c.Ports {
			if p.ContainerPort > 0 {
				port = p.Name
				if !strings.HasSuffix(argValue(c.Args, "addr"), ":"+itoa(int(p.ContainerPort))) {
					t.Fatalf("--addr %q does not listen on containerPort %d", argValue(c.Args, "addr"), p.ContainerPort)
				}
			}
		}
		for name, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
			if p == nil || p.HTTPGet == nil {
				t.Fatalf("%s probe: want an httpGet", name)
			}
			if !gets[p.HTTPGet.Path] {
				t.Fatalf("%s probe path %s is not a GET route of the API", name, p.HTTPGet.Path)
			}
			if p.HTTPGet.Port.String() != port {
				t.Fatalf("%s probe port %s, want the container's port %s", name, p.HTTPGet.Port.String(), port)
			}
		}
		for _, s := range m.services {
			for _, sp := range s.Spec.Ports {
				if sp.TargetPort.String() != port {
					t.Fatalf("service %s targets port %s, want %s", s.Name, sp.TargetPort.String(), port)
				}
			}
		}
	})

	t.Run("preStop drains within the grace period", func(t *testing.T) {
		if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Exec == nil {
			t.Fatal("no preStop exec hook")
		}
		cmd := c.Lifecycle.PreStop.Exec.Command
		if len(cmd) < 4 || cmd[0] != "warren" || cmd[1] != "node" || cmd[2] != "drain" || !slices.Contains(cmd, "--self") {
			t.Fatalf("preStop %v: want warren node drain --self", cmd)
		}
		drain := 60 * time.Second
		if v := argValue(c.Args, "drain-timeout"); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				t.Fatal(err)
			}
			drain = d
		}
		grace := pod.Spec.TerminationGracePeriodSeconds
		// The hook's drain, then SIGTERM's (little left) and the hibernate.
		if grace == nil || time.Duration(*grace)*time.Second < 2*drain+10*time.Second {
			t.Fatalf("terminationGracePeriodSeconds %v does not cover two drains of %v and the shutdown", grace, drain)
		}
	})

	t.Run("write log on a volume", func(t *testing.T) {
		data := argValue(c.Args, "data")
		mounted := ""
		for _, vm := range c.VolumeMounts {
			if vm.MountPath == data {
				mounted = vm.Name
			}
		}
		if data == "" || mounted == "" {
			t.Fatalf("--data %q is not a volume mount", data)
		}
		found := false
		for _, v := range sts.Spec.VolumeClaimTemplates {
			found = found || v.Name == mounted
		}
		if !found {
			t.Fatalf("volume %s is no volumeClaimTemplate: a rescheduled pod would lose its write log", mounted)
		}
	})

	t.Run("native tier privileges", func(t *testing.T) {
		native := !slices.Contains(c.Args, "--no-native")
		priv := c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged
		if native && !priv {
			t.Fatal("the native tier runs (no --no-native) but the container is not privileged (mounts, namespaces, cgroups)")
		}
	})
}

func argValue(args []string, name string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

func itoa(n int) string { return strconv.Itoa(n) }
