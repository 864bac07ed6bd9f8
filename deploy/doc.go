// Package deploy holds the production deployment's configuration that is
// not Go: the reverse proxy in front of the API replicas (nginx.conf), used
// by the repository's docker-compose.yml. Its test loads docker-compose.yml
// with compose-go, the loader `docker compose config` itself uses, and
// checks the services, health checks, start order and proxy upstreams.
package deploy
