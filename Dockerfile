# CPU image of `hugginggpt serve`: the chat page, JARVIS's endpoints and the OpenAI-compatible API;
# `hugginggpt mcp` (and every other command) runs in it too, with `--entrypoint hugginggpt`.
#   docker build -t hugginggpt .
#   docker run -p 127.0.0.1:8000:8000 -e HUGGINGGPT_API_KEY=change-me -v hugginggpt-data:/data hugginggpt
#   docker run -i --rm -v hugginggpt-data:/data -v "$PWD/pictures:/pictures:ro" --entrypoint hugginggpt hugginggpt mcp --allow /pictures
# Models (the embedded GGUF controller, task models) download into /data on first use; mount a
# GGUF file and pass `--llm gguf:/models/NAME.gguf` to run without the Hub. See README "Server" and "MCP".
FROM python:3.11-slim

# llama-cpp-python compiles llama.cpp (about 11 minutes on 2 cores); libsndfile for audio, ffmpeg for video.
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential cmake libsndfile1 ffmpeg \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
ARG TORCH_SPEC="torch==2.13.0"
ARG PIP_ARGS=""
RUN pip install --no-cache-dir ${PIP_ARGS} "${TORCH_SPEC}"
COPY pyproject.toml constraints.txt README.md llama-cmake-args.sh ./
COPY hugginggpt ./hugginggpt
# llama.cpp built as setup.sh builds it (llama-cmake-args.sh: no multimodal part; on x86-64 no Intel AMX,
# whose kernels stop the process with an illegal instruction on virtual machines whose CPU lists AMX).
RUN CMAKE_ARGS="$(sh llama-cmake-args.sh)" && export CMAKE_ARGS \
    && pip install --no-cache-dir ${PIP_ARGS} -c constraints.txt ".[local,llm,server,mcp]" \
    && useradd --create-home --uid 1000 hugginggpt && mkdir /data && chown hugginggpt /data

USER hugginggpt
ENV HUGGINGGPT_HOME=/data/runs HF_HOME=/data/hf PYTHONUNBUFFERED=1
VOLUME /data
EXPOSE 8000
# Inside the container it listens on all interfaces; publish the port on 127.0.0.1 or set an API key.
ENTRYPOINT ["hugginggpt", "serve", "--host", "0.0.0.0", "--port", "8000"]
# The server's /health; a container running another command (`mcp`, `run`) has no port to check.
HEALTHCHECK --interval=30s --timeout=5s --start-period=600s CMD python -c "import sys, urllib.request; b'serve' in open('/proc/1/cmdline', 'rb').read().split(b'\0') or sys.exit(0); urllib.request.urlopen('http://127.0.0.1:8000/health')"
