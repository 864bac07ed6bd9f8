// client.mjs drives a Toolsmith MCP endpoint with the official TypeScript
// SDK: it connects over Streamable HTTP with a bearer key, lists the tools,
// walks find_tools -> call_tool, sends one bad call, and prints one JSON
// object on stdout for the Go test (e2e/mcp_test.go) to check.
//
//   node client.mjs http://127.0.0.1:8080/mcp <key> <intent> <toolId> '<arguments JSON>'
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, key, intent, toolId, argsJSON] = process.argv.slice(2);
if (!url || !intent || !toolId) {
  console.error("usage: node client.mjs URL KEY INTENT TOOL_ID ARGUMENTS_JSON");
  process.exit(2);
}
const headers = key ? { Authorization: `Bearer ${key}` } : {};
const client = new Client({ name: "toolsmith-ts-check", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });

const text = (res) => (res.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
try {
  await client.connect(transport);
  const tools = (await client.listTools()).tools.map((t) => t.name);
  const found = await client.callTool({ name: "find_tools", arguments: { intent, limit: 3 } });
  const called = await client.callTool({ name: "call_tool", arguments: { toolId, arguments: JSON.parse(argsJSON || "{}") } });
  const bad = await client.callTool({ name: "call_tool", arguments: { toolId: "no.such_tool" } });
  console.log(JSON.stringify({
    server: client.getServerVersion(),
    tools,
    found: found.structuredContent ?? text(found),
    called: { isError: !!called.isError, structured: called.structuredContent ?? null, text: text(called) },
    bad: { isError: !!bad.isError, text: text(bad) },
  }));
  await client.close();
} catch (err) {
  console.error(`mcp client: ${err?.stack || err}`);
  process.exit(1);
}
