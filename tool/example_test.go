package tool_test

import (
	"fmt"

	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/tool"
)

// Validate reports every problem of a manifest at once, each with its path.
func ExampleValidate() {
	m, err := tool.Parse([]byte(`{
	  "toolId": "currency.convert", "verb": "convertCurrency", "name": "Converter",
	  "description": "Converts money.", "category": "finance",
	  "inputSchema": {"type": "object", "properties": {"amount": {"type": "number"}}},
	  "examples": [{"input": {"amount": "ten"}}]
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	tool.Normalize(&m)
	for _, f := range fault.Fields(tool.Validate(&m)) {
		fmt.Println(f)
	}
	// Output:
	// verb: must be UPPER_SNAKE_CASE (e.g. CONVERT_CURRENCY), got "convertCurrency"
	// examples[0].input.amount: got string, want number
}

// Parse is strict: unknown fields and JSON type errors name their path.
func ExampleParse() {
	_, err := tool.Parse([]byte(`{"toolId": 7, "tool_name": "x"}`))
	for _, f := range fault.Fields(err) {
		fmt.Println(f)
	}
	// Output:
	// toolId: must be a string, got number
	// tool_name: unknown field
}
