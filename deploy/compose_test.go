package deploy_test

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
)

// load reads ../docker-compose.yml as `docker compose config` does, with
// env as the whole environment.
func load(t *testing.T, env ...string) (*types.Project, error) {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{"../docker-compose.yml"},
		cli.WithWorkingDirectory(".."), cli.WithEnv(env), cli.WithInterpolation(true),
		cli.WithNormalization(true), cli.WithConsistency(true), cli.WithResolvedPaths(true))
	if err != nil {
		t.Fatal(err)
	}
	return opts.LoadProject(context.Background())
}

func compose(t *testing.T) *types.Project {
	t.Helper()
	p, err := load(t, "NEO4J_PASSWORD=n", "POSTGRES_PASSWORD=p")
	if err != nil {
		t.Fatalf("docker-compose.yml does not validate: %v", err)
	}
	return p
}

// The compose file validates, and refuses to load without its secrets.
func TestComposeValidates(t *testing.T) {
	p := compose(t)
	want := []string{"api-1", "api-2", "neo4j", "postgresql", "proxy", "temporal", "temporal-ui", "worker-1", "worker-2"}
	if got := p.ServiceNames(); !slices.Equal(sorted(got), want) {
		t.Fatalf("services %v, want %v", sorted(got), want)
	}
	for _, missing := range []string{"NEO4J_PASSWORD", "POSTGRES_PASSWORD"} {
		var env []string
		for _, kv := range []string{"NEO4J_PASSWORD=n", "POSTGRES_PASSWORD=p"} {
			if !strings.HasPrefix(kv, missing+"=") {
				env = append(env, kv)
			}
		}
		if _, err := load(t, env...); err == nil || !strings.Contains(err.Error(), missing) {
			t.Errorf("without %s: %v", missing, err)
		}
	}
}

// Every service declares a health check, and every start-order dependency
// waits for its dependency's health; the API replicas and the workers wait
// for Neo4j and Temporal, Temporal for PostgreSQL, the proxy for both
// replicas.
func TestComposeHealthAndStartOrder(t *testing.T) {
	p := compose(t)
	for name, s := range p.Services {
		if s.HealthCheck == nil || s.HealthCheck.Disable || len(s.HealthCheck.Test) == 0 {
			t.Errorf("%s: no health check", name)
		}
		for dep, d := range s.DependsOn {
			if d.Condition != types.ServiceConditionHealthy {
				t.Errorf("%s depends on %s with %q, want %s", name, dep, d.Condition, types.ServiceConditionHealthy)
			}
		}
	}
	needs := map[string][]string{
		"temporal": {"postgresql"},
		"api-1":    {"neo4j", "temporal"},
		"api-2":    {"neo4j", "temporal", "api-1"},
		"worker-1": {"neo4j", "temporal"},
		"worker-2": {"neo4j", "temporal"},
		"proxy":    {"api-1", "api-2"},
	}
	for name, deps := range needs {
		for _, d := range deps {
			if _, ok := p.Services[name].DependsOn[d]; !ok {
				t.Errorf("%s does not wait for %s: %v", name, d, p.Services[name].DependsOn)
			}
		}
	}
}

// The API replicas and workers run the production binary's api and worker
// commands against Neo4j and the Temporal service; only the proxy publishes
// the API.
func TestComposeToolsmithServices(t *testing.T) {
	p := compose(t)
	for _, name := range []string{"api-1", "api-2", "worker-1", "worker-2"} {
		s := p.Services[name]
		role := strings.TrimRight(name, "-12")
		if !slices.Equal(s.Command, types.ShellCommand{role}) {
			t.Errorf("%s: command %v, want [%s]", name, s.Command, role)
		}
		if s.Build == nil || (role == "worker") != (s.Build.Target == "worker") {
			t.Errorf("%s: build %+v", name, s.Build)
		}
		env := s.Environment
		if v := env["TOOLSMITH_STORE"]; v == nil || *v != "neo4j" {
			t.Errorf("%s: TOOLSMITH_STORE %v", name, v)
		}
		if v := env["TEMPORAL_ADDRESS"]; v == nil || !strings.HasPrefix(*v, "temporal:") {
			t.Errorf("%s: TEMPORAL_ADDRESS %v", name, v)
		}
		if role == "api" {
			if len(s.Ports) != 0 {
				t.Errorf("%s publishes %v: the proxy is the API's one entry", name, s.Ports)
			}
			if v := env["TOOLSMITH_HTTP_ADDR"]; v == nil || !strings.HasSuffix(*v, ":8080") {
				t.Errorf("%s: TOOLSMITH_HTTP_ADDR %v", name, v)
			}
		}
	}
	if a, b := p.Services["api-1"], p.Services["api-2"]; a.Image != b.Image || a.Image == "" {
		t.Errorf("the replicas run different images: %q %q", a.Image, b.Image)
	}
	raw, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "./cmd/toolsmith-server") || !strings.Contains(string(raw), `ENTRYPOINT ["/usr/local/bin/toolsmith-server"]`) {
		t.Error("the Dockerfile does not build and run cmd/toolsmith-server")
	}
}

// The proxy mounts deploy/nginx.conf, which round-robins over exactly the
// API replicas on their port and listens where the proxy publishes.
func TestComposeProxy(t *testing.T) {
	p := compose(t)
	px := p.Services["proxy"]
	var conf string
	for _, v := range px.Volumes {
		if strings.HasSuffix(v.Source, "deploy/nginx.conf") && v.Target == "/etc/nginx/conf.d/default.conf" && v.ReadOnly {
			conf = v.Source
		}
	}
	if conf == "" {
		t.Fatalf("the proxy does not mount deploy/nginx.conf read-only: %+v", px.Volumes)
	}
	raw, err := os.ReadFile("nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`(?m)#.*$`).ReplaceAllString(string(raw), "")
	up := regexp.MustCompile(`upstream\s+(\w+)\s*\{([^}]*)\}`).FindStringSubmatch(text)
	if up == nil {
		t.Fatal("nginx.conf has no upstream block")
	}
	var servers []string
	for _, m := range regexp.MustCompile(`(?m)^\s*server\s+([^\s;]+)`).FindAllStringSubmatch(up[2], -1) {
		servers = append(servers, m[1])
	}
	if want := []string{"api-1:8080", "api-2:8080"}; !slices.Equal(sorted(servers), want) {
		t.Errorf("upstream servers %v, want %v", servers, want)
	}
	for _, balance := range []string{"ip_hash", "least_conn", "hash ", "random"} {
		if strings.Contains(up[2], balance) {
			t.Errorf("the upstream balances with %s, not round-robin", balance)
		}
	}
	if !strings.Contains(text, "proxy_pass http://"+up[1]+";") {
		t.Errorf("no proxy_pass to the upstream %s", up[1])
	}
	listen := regexp.MustCompile(`listen\s+(\d+)`).FindStringSubmatch(text)
	if len(px.Ports) != 1 || listen == nil || listen[1] != "8080" || px.Ports[0].Target != 8080 || px.Ports[0].HostIP != "127.0.0.1" {
		t.Errorf("proxy ports %+v, nginx listens on %v", px.Ports, listen)
	}
}

// docs/operations.md's production section names every service of the file.
func TestComposeDocumented(t *testing.T) {
	p := compose(t)
	raw, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i := strings.Index(doc, "## Production: docker-compose")
	if i < 0 {
		t.Fatal("docs/operations.md has no production section")
	}
	section := doc[i:]
	if j := strings.Index(section[3:], "\n## "); j >= 0 {
		section = section[:j+3]
	}
	for _, name := range p.ServiceNames() {
		if !strings.Contains(section, "`"+name+"`") {
			t.Errorf("the production section does not name the service `%s`", name)
		}
	}
}

func sorted(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return out
}

// The API replicas believe X-Forwarded-For from the proxy alone: the
// address they trust is the proxy's fixed address, and nothing wider.
func TestReplicasTrustOnlyTheProxy(t *testing.T) {
	p := compose(t)
	proxy, err := p.GetService("proxy")
	if err != nil {
		t.Fatal(err)
	}
	nw, ok := proxy.Networks["default"]
	if !ok || nw == nil || nw.Ipv4Address == "" {
		t.Fatalf("the proxy has no fixed address: %+v", proxy.Networks)
	}
	for _, name := range []string{"api-1", "api-2"} {
		s, err := p.GetService(name)
		if err != nil {
			t.Fatal(err)
		}
		got := s.Environment["TOOLSMITH_TRUSTED_PROXIES"]
		if got == nil || *got != nw.Ipv4Address {
			t.Errorf("%s trusts %v, want the proxy's %s only", name, got, nw.Ipv4Address)
		}
	}
}
