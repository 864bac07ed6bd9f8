// Package deps pins the project's heavy dependencies while the packages that
// use them are written; it is removed once they are imported for real.
package deps

import (
	_ "github.com/getkin/kin-openapi/openapi3"
	_ "github.com/getkin/kin-openapi/openapi3filter"
	_ "github.com/gin-gonic/gin"
	_ "github.com/neo4j/neo4j-go-driver/v5/neo4j"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "github.com/temporalio/ui-server/v2/server"
	_ "github.com/testcontainers/testcontainers-go"
	_ "github.com/tmc/langchaingo/embeddings"
	_ "github.com/tmc/langchaingo/llms/fake"
	_ "github.com/tmc/langchaingo/llms/ollama"
	_ "github.com/tmc/langchaingo/llms/openai"
	_ "github.com/viterin/vek/vek32"
	_ "go.temporal.io/sdk/client"
	_ "go.temporal.io/sdk/testsuite"
	_ "go.temporal.io/sdk/worker"
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	_ "go.temporal.io/server/schema/sqlite"
	_ "go.temporal.io/server/temporal"
	_ "go.temporal.io/server/temporaltest"
	_ "gonum.org/v1/gonum/mat"
	_ "modernc.org/sqlite"
)
