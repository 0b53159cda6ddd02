// HuggingGPT API reference: renders this server's /openapi.json with no CDN and no build step (Swagger
// UI's assets are not shipped, and the page's Content-Security-Policy allows this server's files only).
// With an API key set the spec is behind it: the key is asked for here (the chat page's saved key is
// used when there is one). Every text from the spec is set as text, never as HTML.
"use strict";

const $ = (selector) => document.querySelector(selector);
const KEY_STORAGE = "hugginggpt-api-key";

function element(tag, text, attributes = {}) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
}

function schemaName(schema) {
  if (!schema) return "";
  if (schema.$ref) return schema.$ref.split("/").pop();
  if (schema.type === "array") return `array of ${schemaName(schema.items) || "any"}`;
  if (schema.anyOf) return schema.anyOf.map(schemaName).join(" | ");
  return schema.type || "object";
}

function parameters(operation) {
  const rows = operation.parameters || [];
  if (!rows.length) return null;
  const table = element("table");
  const head = element("tr");
  for (const title of ["parameter", "in", "required", "type"]) head.append(element("th", title));
  table.append(head);
  for (const parameter of rows) {
    const row = element("tr");
    row.append(element("td", parameter.name), element("td", parameter.in),
               element("td", parameter.required ? "yes" : "no"), element("td", schemaName(parameter.schema)));
    table.append(row);
  }
  return table;
}

function bodyAndResponses(operation) {
  const parts = [];
  const body = operation.requestBody && operation.requestBody.content;
  if (body) {
    for (const [type, media] of Object.entries(body)) {
      parts.push(element("p", `request body (${type}): ${schemaName(media.schema)}`));
    }
  }
  const responses = operation.responses || {};
  if (Object.keys(responses).length) {
    const list = element("ul");
    for (const [code, response] of Object.entries(responses)) {
      const types = Object.keys(response.content || {}).join(", ");
      list.append(element("li", `${code}: ${response.description || ""}${types ? ` (${types})` : ""}`));
    }
    parts.push(element("p", "responses:"), list);
  }
  return parts;
}

function render(spec) {
  const main = $("#docs");
  main.replaceChildren();
  $("#title").textContent = `${(spec.info && spec.info.title) || "API"} ${(spec.info && spec.info.version) || ""}`.trim();
  for (const [path, methods] of Object.entries(spec.paths || {})) {
    for (const [method, operation] of Object.entries(methods)) {
      const section = element("section", null, { class: "operation", "data-testid": "operation" });
      const title = element("h2");
      title.append(element("span", method.toUpperCase(), { class: "method", "data-method": method }),
                   element("span", path), element("span", operation.summary || "", { class: "summary" }));
      section.append(title);
      if (operation.description) section.append(element("p", operation.description, { class: "description" }));
      const table = parameters(operation);
      if (table) section.append(table);
      section.append(...bodyAndResponses(operation));
      main.append(section);
    }
  }
  const schemas = (spec.components && spec.components.schemas) || {};
  if (Object.keys(schemas).length) {
    const details = element("details");
    details.append(element("summary", "schemas"), element("pre", JSON.stringify(schemas, null, 2)));
    main.append(details);
  }
}

async function load() {
  const key = $("#api-key").value.trim();
  const status = $("#status") || $("#docs").appendChild(element("p", "", { id: "status" }));
  const response = await fetch("/openapi.json", { headers: key ? { Authorization: `Bearer ${key}` } : {} });
  if (response.status === 401) {
    $("#key-box").hidden = false;
    status.textContent = "This server needs its API key: enter it above.";
    status.dataset.state = "error";
    return;
  }
  if (!response.ok) {
    status.textContent = `GET /openapi.json: ${response.status} ${response.statusText}`;
    status.dataset.state = "error";
    return;
  }
  if (key) localStorage.setItem(KEY_STORAGE, key);
  render(await response.json());
}

$("#api-key").value = localStorage.getItem(KEY_STORAGE) || "";
$("#load").addEventListener("click", load);
$("#api-key").addEventListener("keydown", (event) => { if (event.key === "Enter") load(); });
load();
