// HuggingGPT chat page: no build step. A request goes to POST /runs (multipart, with files), its
// stage events are read from GET /runs/{id}/events (SSE over fetch, so the API key header travels),
// and the plan, the answer and the produced media are drawn as they arrive.
"use strict";

const $ = (selector) => document.querySelector(selector);
const history = [];          // earlier turns: {role, content}
let current = null;          // {id, controller} of the run in progress

function apiKey() { return $("#api-key").value.trim(); }

function authHeaders() {
  const key = apiKey();
  return key ? { Authorization: `Bearer ${key}` } : {};
}

async function api(path, options = {}) {
  const response = await fetch(path, { ...options, headers: { ...authHeaders(), ...(options.headers || {}) } });
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try { message = (await response.json()).error.message; } catch (_) { /* not JSON */ }
    throw new Error(message);
  }
  return response;
}

// Files of a run are fetched with the key and shown through object URLs (img/audio/video cannot send headers).
async function objectUrl(url) {
  const blob = await (await api(url)).blob();
  return URL.createObjectURL(blob);
}

async function mediaElement(file) {
  const tag = { image: "img", audio: "audio", video: "video" }[file.kind] || "a";
  const element = document.createElement(tag);
  const source = await objectUrl(file.url);
  if (tag === "a") {
    element.href = source; element.download = file.name.split("/").pop(); element.textContent = file.name;
  } else {
    element.src = source;
    if (tag !== "img") element.controls = true; else element.alt = file.name;
  }
  element.dataset.file = file.name;
  element.dataset.kind = file.kind;
  return element;
}

function text(value) {
  if (value == null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

class Turn {
  constructor(request, files) {
    const node = $("#turn-template").content.firstElementChild.cloneNode(true);
    node.querySelector(".user").textContent = request;
    for (const file of files) {  // the user's own files, shown from the browser's copy
      const kind = file.type.split("/")[0];
      const element = document.createElement({ image: "img", audio: "audio", video: "video" }[kind] || "span");
      if (element.tagName === "SPAN") element.textContent = file.name;
      else { element.src = URL.createObjectURL(file); element.title = file.name; if (kind !== "image") element.controls = true; }
      element.dataset.upload = file.name;
      node.querySelector(".attachments").appendChild(element);
    }
    $("#chat").appendChild(node);
    this.node = node;
    this.shown = new Set();
  }
  task(id, name) {
    const plan = this.node.querySelector(".plan");
    let item = plan.querySelector(`li[data-task-id="${id}"]`);
    if (!item) {
      item = document.createElement("li");
      item.dataset.taskId = id;
      item.innerHTML = '<span class="state"></span> <span class="name"></span> <span class="step"></span> <span class="detail"></span>';
      plan.appendChild(item);
      this.state(item, "pending");
    }
    if (name) item.querySelector(".name").textContent = `#${id} ${name}`;
    return item;
  }
  state(item, state, detail) {
    if (item.dataset.state !== state) item.dataset.state = state;
    item.querySelector(".state").textContent = state;
    if (detail !== undefined) item.querySelector(".detail").textContent = detail;
  }
  status(state, message) {
    const status = this.node.querySelector(".status");
    status.dataset.state = state;
    status.textContent = message ? `${state}: ${message}` : state;
  }
  async media(files) {
    for (const file of files || []) {
      if (this.shown.has(file.name) || file.name.startsWith("uploads/") || file.name.endsWith("trace.json")) continue;
      this.shown.add(file.name);
      try {
        this.node.querySelector(".media").appendChild(await mediaElement(file));
      } catch (error) { console.warn("cannot show", file.name, error); }
    }
  }
  async onEvent(event) {
    switch (event.event) {
      case "plan":
        this.status("running", "planned");
        for (const step of event.plan || []) {
          const item = this.task(step.id, step.task);
          if (step.step) item.querySelector(".step").textContent = `(${step.step})`;  // the planner's words for it
          this.state(item, "pending", text(step.args));
        }
        if (!(event.plan || []).length) this.node.querySelector(".plan").dataset.empty = "true";
        break;
      case "selection":
        for (const [id, choice] of Object.entries(event.selections || {})) {
          const item = this.task(id);
          item.title = `model: ${choice.model || "none"} (${choice.reason || ""})`;
        }
        break;
      case "task_start":
        this.state(this.task(event.id, event.task), "running", text(event.args));
        break;
      case "task_end":
        this.state(this.task(event.id, event.task), "done", text(event.result));
        break;
      case "task_failed":
        this.state(this.task(event.id, event.task), "failed", text(event.error));
        break;
      case "task_skipped":
        this.state(this.task(event.id, event.task), "skipped", text(event.reason));
        break;
      case "response_delta":  // the answer as the controller writes it
        this.node.querySelector(".answer").textContent += event.text || "";
        break;
      case "response":
        this.node.querySelector(".answer").textContent = event.output || "";
        break;
      case "final":
        if (event.output && !this.node.querySelector(".answer").textContent) {
          this.node.querySelector(".answer").textContent = event.output.output || "";
        }
        break;
      case "end":
        this.status(event.status, event.error);
        break;
    }
    await this.media(event.files);
  }
  async trace(runId) {
    const run = await (await api(`/runs/${runId}`)).json();
    await this.media(run.files);
    if (!run.trace) return run;
    const link = this.node.querySelector(".trace");
    link.href = await objectUrl(`/runs/${runId}/files/${run.trace}?download=1`);
    link.download = `trace-${runId.slice(0, 8)}.json`;
    link.hidden = false;
    return run;
  }
}

// SSE over fetch: "event:", "data:" lines, a blank line ends a message.
async function* sseEvents(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n");
      if (data) yield JSON.parse(data);
    }
  }
}

function busy(on) {
  $("#send").disabled = on;
  $("#stop").hidden = !on;
}

async function ask(event) {
  event.preventDefault();
  const request = $("#input").value.trim();
  if (!request || current) return;
  const files = Array.from($("#files").files);
  const turn = new Turn(request, files);
  const form = new FormData();
  form.append("input", request);
  form.append("chat_history", JSON.stringify(history));
  form.append("agent", $("#agent").value);
  for (const file of files) form.append("files", file, file.name);
  busy(true);
  let answer = "";
  try {
    const { id } = await (await api("/runs", { method: "POST", body: form })).json();
    turn.node.dataset.runId = id;
    current = { id };
    $("#input").value = "";
    $("#files").value = "";
    const stream = await api(`/runs/${id}/events`);
    for await (const stage of sseEvents(stream)) {
      await turn.onEvent(stage);
      if (stage.event === "response") answer = stage.output || "";
      if (stage.event === "final" && stage.output) answer = stage.output.output || answer;
    }
    await turn.trace(id);
    if (answer) history.push({ role: "user", content: request }, { role: "assistant", content: answer });
  } catch (error) {
    turn.status("failed", error.message);
  } finally {
    current = null;
    busy(false);
  }
}

async function stop() {
  if (current) {
    try { await api(`/runs/${current.id}`, { method: "DELETE" }); } catch (error) { console.warn(error); }
  }
}

async function init() {
  $("#api-key").value = localStorage.getItem("hugginggpt-api-key") || "";
  $("#api-key").addEventListener("change", () => localStorage.setItem("hugginggpt-api-key", apiKey()));
  const health = await (await fetch("/health")).json();
  $("#key-box").hidden = !health.auth;
  for (const name of health.agents) {
    const option = document.createElement("option");
    option.value = option.textContent = name;
    option.selected = name === health.default_agent;
    $("#agent").appendChild(option);
  }
  $("#ask").addEventListener("submit", ask);
  $("#stop").addEventListener("click", stop);
  $("#new-chat").addEventListener("click", () => { history.length = 0; $("#chat").textContent = ""; });
  $("#input").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("#ask").requestSubmit(); }
  });
  document.body.dataset.ready = "true";
}

init();
