-- mapwright for Neovim: starts `mapwright lsp` with the built-in client and
-- attaches it to mapper buffers; all language intelligence lives in the
-- server. Written for Neovim 0.7 (Debian's): `vim.lsp.start_client` +
-- `vim.lsp.buf_attach_client`, no `vim.lsp.start` / `vim.fs` (0.8+).
--
--   require('mapwright').setup {
--     cmd = { 'mapwright', 'lsp' },          -- or { '/path/to/mapwright', 'lsp' }
--     settings = { app = 'circuit', machine = 'p100x4', proposer = 'search' },
--     on_attach = function(client, bufnr) ... end,
--   }

local M = {}

local defaults = {
  name = 'mapwright',
  cmd = { 'mapwright', 'lsp' },
  filetypes = { 'mapper' },
  -- The directory holding the nearest of these is the workspace root.
  root_markers = { 'mapwright.toml', '.git' },
  -- The `mapwright` settings section (app, machine, runtimeUrl, proposer,
  -- llm = { baseUrl, model, apiKeyEnv }, diagnostics, completion, ...).
  -- The LLM API key itself is read by the server from the environment
  -- variable named by `llm.apiKeyEnv`; it never goes here.
  settings = {},
  capabilities = nil,
  on_attach = nil,
  flags = {},
  cmd_env = nil,
  -- Show the server's code lenses (the measured time of the tasks each
  -- statement decided, after a run on real Legion) as virtual text,
  -- refreshed on entering the buffer, on leaving insert mode and after
  -- each command (Neovim 0.7 has no `workspace/codeLens/refresh`).
  codelens = true,
}

M.config = vim.deepcopy(defaults)

--- root_dir -> client id
M.clients = {}

--- The last command result: { command = ..., text = ..., failed = ..., result = ... }
M.last = nil

local function notify(msg, level)
  vim.notify('mapwright: ' .. msg, level or vim.log.levels.INFO)
end

local uv = vim.uv or vim.loop

local function exists(path)
  return uv.fs_stat(path) ~= nil
end

-- Client methods are called with `:` from Neovim 0.11 on (the `.` form is
-- deprecated there) and with `.` before (0.7 has no `self` parameter).
local method_call = vim.fn.has('nvim-0.11') == 1

local function call(client, method, ...)
  if method_call then
    return client[method](client, ...)
  end
  return client[method](...)
end

-- `vim.lsp.start_client` is deprecated from 0.11 on in favour of
-- `vim.lsp.start`; both return a client id there.
local function lsp_start_client(config)
  if vim.fn.has('nvim-0.11') == 1 then
    return vim.lsp.start(config, { attach = false })
  end
  return vim.lsp.start_client(config)
end

local function buf_clients(bufnr)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = bufnr })
  end
  return vim.lsp.buf_get_clients(bufnr)
end

local function dirname(path)
  return vim.fn.fnamemodify(path, ':h')
end

--- The workspace root for a buffer: the nearest directory upwards holding one
--- of `root_markers`, else the file's directory (else the cwd).
function M.root_dir(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' then
    return uv.cwd()
  end
  local start = dirname(vim.fn.fnamemodify(name, ':p'))
  local dir = start
  while true do
    for _, marker in ipairs(M.config.root_markers) do
      if exists(dir .. '/' .. marker) then
        return dir
      end
    end
    local parent = dirname(dir)
    if parent == dir then
      return start
    end
    dir = parent
  end
end

--- Settings given either flat (`{ app = ... }`) or wrapped (`{ mapwright = {...} }`).
local function flat_settings()
  local s = M.config.settings or {}
  if type(s.mapwright) == 'table' then
    return s.mapwright
  end
  return s
end

local function start_client(root)
  local settings = flat_settings()
  local config = {
    name = M.config.name,
    cmd = M.config.cmd,
    cmd_env = M.config.cmd_env,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    init_options = settings,
    -- Answers `workspace/configuration` for the section `mapwright`.
    settings = { mapwright = settings },
    capabilities = M.config.capabilities or vim.lsp.protocol.make_client_capabilities(),
    flags = M.config.flags,
    on_attach = M.config.on_attach,
    on_init = function(client)
      call(client, 'notify', 'workspace/didChangeConfiguration', { settings = client.config.settings })
    end,
    on_exit = function()
      M.clients[root] = nil
    end,
  }
  return lsp_start_client(config)
end

--- Asks the server for `bufnr`'s code lenses again and shows them (a no-op
--- with `codelens = false` or without a mapwright client).
function M.refresh_codelens(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not M.config.codelens or not vim.lsp.codelens or not M.client(bufnr) then
    return
  end
  vim.api.nvim_buf_call(bufnr, function()
    vim.lsp.codelens.refresh()
  end)
end

--- Attaches the server (started for the buffer's root if needed) to `bufnr`.
--- Returns the client id, or nil if the server could not be started.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local root = M.root_dir(bufnr)
  local id = M.clients[root]
  local client = id and vim.lsp.get_client_by_id(id)
  if not client or call(client, 'is_stopped') then
    id = start_client(root)
    if not id then
      notify('could not start ' .. table.concat(M.config.cmd, ' '), vim.log.levels.ERROR)
      return nil
    end
    M.clients[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

--- The mapwright client attached to `bufnr`, if any.
function M.client(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  for _, client in pairs(buf_clients(bufnr)) do
    if client.name == M.config.name then
      return client
    end
  end
  return nil
end

local function first_line(s)
  local line = (s:match('[^\r\n]*%S[^\r\n]*') or ''):gsub('^%s+', '')
  return line
end

local function seconds(s)
  if s < 1e-3 then
    return string.format('%.3g µs', s * 1e6)
  elseif s < 1 then
    return string.format('%.3g ms', s * 1e3)
  end
  return string.format('%.3g s', s)
end

--- A one-line summary of a command's result (the server owns its shape; the
--- common fields are read, as in the VS Code extension).
function M.summarize(command, result)
  local verb = command:gsub('^mapwright%.', '')
  if type(result) == 'string' then
    return verb .. ': ' .. first_line(result), false
  end
  if type(result) ~= 'table' then
    return verb .. ': done', false
  end
  local err = result.error or result.failure
  local failed = result.ok == false or result.success == false
    or (type(err) == 'string' and err ~= '') or type(err) == 'table'
  local parts = {}
  local normalized = result.best_normalized or result.bestNormalized or result.normalized or result.speedup
  if type(normalized) == 'number' then
    table.insert(parts, string.format('%.2fx', normalized))
  end
  local secs = result.elapsed_s or result.elapsedSeconds or result.seconds or result.time_s
  if type(secs) == 'number' then
    table.insert(parts, seconds(secs))
  end
  local text = result.summary or result.message
  if #parts == 0 and type(text) == 'string' then
    table.insert(parts, first_line(text))
  end
  if failed and #parts == 0 then
    table.insert(parts, type(err) == 'string' and first_line(err) or 'failed')
  end
  if #parts == 0 then
    table.insert(parts, 'done')
  end
  return verb .. ': ' .. table.concat(parts, ', '), failed
end

--- For a statusline: `%{v:lua.require'mapwright'.statusline()}`.
function M.statusline()
  return M.last and ('Mapper ' .. M.last.text) or ''
end

local function show_explanation(result)
  local text, ft
  if type(result) == 'string' then
    text, ft = result, 'markdown'
  elseif type(result) == 'table' and type(result.markdown or result.text or result.table) == 'string' then
    text, ft = result.markdown or result.text or result.table, 'markdown'
  else
    text, ft = vim.fn.json_encode(result), 'json'
  end
  vim.cmd('botright new')
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, '\n', { plain = true }))
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = ft
  vim.bo[buf].modifiable = false
  vim.api.nvim_buf_set_name(buf, 'mapwright://explain/' .. buf)
end

--- Runs one of the server's commands (`mapwright.optimize`, `mapwright.run`,
--- `mapwright.explain`) on a buffer via `workspace/executeCommand`, with the
--- document URI as the argument. `on_done(err, result)` is optional.
function M.execute(command, bufnr, on_done)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local client = M.client(bufnr)
  if not client then
    notify('no mapwright server is attached to this buffer (require("mapwright").setup{})', vim.log.levels.ERROR)
    return
  end
  local params = { command = command, arguments = { vim.uri_from_bufnr(bufnr) } }
  notify(command .. '…')
  call(client, 'request', 'workspace/executeCommand', params, function(err, result)
    if err then
      M.last = { command = command, text = command:gsub('^mapwright%.', '') .. ': failed', failed = true, error = err }
      notify(command .. ' failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    else
      local text, failed = M.summarize(command, result)
      M.last = { command = command, text = text, failed = failed, result = result }
      notify(text, failed and vim.log.levels.WARN or vim.log.levels.INFO)
      if command == 'mapwright.explain' then
        show_explanation(result)
      end
    end
    -- A run or an optimize changes what the lenses measure.
    M.refresh_codelens(bufnr)
    if on_done then
      on_done(err, result)
    end
  end, bufnr)
end

--- Formats a buffer synchronously (Neovim 0.7's `formatting_sync`, or
--- `vim.lsp.buf.format` on 0.8+), with the mapwright client only.
function M.format(bufnr, timeout_ms)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  timeout_ms = timeout_ms or 5000
  if vim.lsp.buf.format then
    vim.lsp.buf.format({ bufnr = bufnr, timeout_ms = timeout_ms, name = M.config.name })
  else
    vim.api.nvim_buf_call(bufnr, function()
      vim.lsp.buf.formatting_sync(nil, timeout_ms)
    end)
  end
end

--- Stops every mapwright client and attaches fresh ones to the mapper buffers.
function M.restart()
  for root, id in pairs(M.clients) do
    local client = vim.lsp.get_client_by_id(id)
    if client then
      call(client, 'stop')
    end
    M.clients[root] = nil
  end
  -- Give the old processes a moment to exit before starting new ones.
  vim.defer_fn(function()
    M.attach_loaded()
  end, 500)
end

local function is_mapper(bufnr)
  return vim.tbl_contains(M.config.filetypes, vim.bo[bufnr].filetype)
end

--- Attaches to every loaded mapper buffer.
function M.attach_loaded()
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and is_mapper(bufnr) then
      M.attach(bufnr)
    end
  end
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  if type(M.config.cmd) == 'string' then
    M.config.cmd = { M.config.cmd, 'lsp' }
  end
  local group = vim.api.nvim_create_augroup('mapwright', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = M.config.filetypes,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave' }, {
    group = group,
    callback = function(args)
      if is_mapper(args.buf) then
        M.refresh_codelens(args.buf)
      end
    end,
  })
  M.attach_loaded()
end

return M
