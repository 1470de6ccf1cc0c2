-- Patch review: the server's workspace/applyEdit is shown as a review tab
-- (one side-by-side diff per changed file: the buffer as it is now against
-- what the agent proposes) and nothing lands until the user decides.
--
-- Per file the user accepts (ga, or :w in the proposed buffer) or rejects
-- (gr); gA / gR decide everything left; q rejects everything left. The
-- proposed side is an ordinary buffer: what it holds when accepted is what is
-- applied. Created, renamed and deleted files are listed with the rest.
--
-- Accepted files are applied to their buffers and written (config
-- review.write), then the server gets the reply: `applied` is true when
-- anything landed, and `failureReason` names what was rejected, edited or
-- stale. The server reads the real outcome back from the didChange and
-- didSave notifications, which the writes send before the reply.
--
-- A change whose buffer was edited after the agent made its proposal (the
-- edit's document version is older than the buffer's, or the buffer changed
-- while the review was open) is stale: it is never applied, and the user and
-- the server are told.
--
-- On 0.10+ the handler yields until the review is decided, so the editor is
-- free meanwhile. On 0.7 a server request must be answered before Neovim
-- returns to its loop, so the review runs modally: keys are read here, review
-- keys are acted on, and the rest are passed on to Neovim (motions, insert
-- mode, :commands all work in the proposed buffer).
local M = {}

M.subcommands = { 'accept', 'reject', 'acceptall', 'rejectall', 'next', 'prev', 'quit' }

local uv = vim.uv or vim.loop
local ns = vim.api.nvim_create_namespace('warden_review')

local Session = {}
Session.__index = Session

local current -- the open review, if any

--- The open review session, or nil.
function M.current()
  return current
end

--- The last finished review: {result, changes}; for tests and :Warden status.
M.last = nil

local function find_buf(path)
  local full = vim.fn.fnamemodify(path, ':p')
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.api.nvim_buf_get_name(b) == full then
      return b
    end
  end
end

-- The version Neovim last sent to servers for a buffer: util.buf_versions
-- holds it on every version (0.7: set at didOpen; 0.11+: the changedtick of
-- the last didChange, and 0 through its metatable before the first one). It
-- is not the buffer's changedtick, which is already higher at didOpen.
local function buf_version(bufnr)
  local versions = vim.lsp.util.buf_versions
  local v = versions and versions[bufnr]
  if v ~= nil then
    return v
  end
  return vim.api.nvim_buf_get_changedtick(bufnr)
end

local function read_file(path)
  if vim.fn.filereadable(path) == 1 then
    return vim.fn.readfile(path)
  end
end

-- The workspace root of the review being built or shown, for short names.
local root

local function rel(path)
  if root and path:sub(1, #root + 1) == root .. '/' then
    return path:sub(#root + 2)
  end
  return vim.fn.fnamemodify(path, ':~:.')
end

local function lines_equal(a, b)
  if #a ~= #b then
    return false
  end
  for i = 1, #a do
    if a[i] ~= b[i] then
      return false
    end
  end
  return true
end

local function scratch(name, lines, filetype, modifiable)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  -- A name another buffer holds (a review still open) gets this one's number.
  if not pcall(vim.api.nvim_buf_set_name, buf, name) then
    pcall(vim.api.nvim_buf_set_name, buf, ('%s [%d]'):format(name, buf))
  end
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  if filetype and filetype ~= '' then
    vim.bo[buf].filetype = filetype
  end
  vim.bo[buf].modifiable = modifiable
  vim.bo[buf].modified = false
  return buf
end

local function guess_filetype(path, bufnr)
  if bufnr and vim.bo[bufnr].filetype ~= '' then
    return vim.bo[bufnr].filetype
  end
  if vim.filetype and vim.filetype.match then
    local ok, ft = pcall(vim.filetype.match, { filename = path })
    if ok and type(ft) == 'string' then
      return ft
    end
  end
end

-- Builds the review items from a WorkspaceEdit, in order. Each item is one
-- path: its base lines (what is there now), its proposed lines, its kind
-- (edit, create, rename, delete) and the document version the agent saw.
local function build_items(edit, encoding)
  local items, by_uri = {}, {}

  local function base_of(path)
    local b = find_buf(path)
    if b then
      return vim.api.nvim_buf_get_lines(b, 0, -1, false), b
    end
    return read_file(path), nil
  end

  local function new_item(kind, uri, path, base, bufnr)
    local item = {
      index = #items + 1,
      kind = kind,
      uri = uri,
      path = path,
      base = base or {},
      bufnr = bufnr,
      base_version = bufnr and buf_version(bufnr) or nil,
      base_tick = bufnr and vim.api.nvim_buf_get_changedtick(bufnr) or nil,
      proposed = vim.deepcopy(base or {}),
      edits = {},
      status = 'pending',
    }
    table.insert(items, item)
    by_uri[uri] = item
    return item
  end

  local function text_edit(uri, version, edits)
    local item = by_uri[uri]
    local path = vim.uri_to_fname(uri)
    if not item then
      local base, bufnr = base_of(path)
      if not base then
        error(('%s does not exist; the edit cannot be applied'):format(rel(path)))
      end
      item = new_item('edit', uri, path, base, bufnr)
    end
    if type(version) == 'number' and item.bufnr and item.version == nil then
      item.version = version
    end
    vim.list_extend(item.edits, edits)
    -- Apply to a throwaway buffer: the same code that would apply it for real.
    local tmp = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_lines(tmp, 0, -1, false, item.proposed)
    -- The review is the confirmation: annotations (which 0.12 would confirm
    -- with a prompt of its own, and refuses without the table) are dropped.
    local plain = vim.tbl_map(function(e)
      return { range = e.range, newText = e.newText }
    end, edits)
    local ok, err = pcall(vim.lsp.util.apply_text_edits, plain, tmp, encoding)
    if ok then
      item.proposed = vim.api.nvim_buf_get_lines(tmp, 0, -1, false)
      -- A new or empty file's text "x\n" is the line "x", not "x" and "";
      -- its text "x" (an undo restoring a file without a final newline)
      -- must be written without one.
      if #item.base == 0 then
        item.noeol = item.proposed[#item.proposed] ~= ''
        if #item.proposed > 1 and not item.noeol then
          table.remove(item.proposed)
        end
      end
    end
    vim.api.nvim_buf_delete(tmp, { force = true })
    if not ok then
      error(('edit for %s does not apply: %s'):format(rel(path), err))
    end
  end

  if edit.documentChanges then
    for _, change in ipairs(edit.documentChanges) do
      local opts = change.options or {}
      if change.kind == 'create' then
        local path = vim.uri_to_fname(change.uri)
        local exists = uv.fs_stat(path) ~= nil
        if exists and opts.ignoreIfExists and not opts.overwrite then
          -- Nothing to do: the spec says skip it.
        elseif exists and not opts.overwrite then
          error(('%s already exists; the agent asked to create it'):format(rel(path)))
        else
          local item = new_item('create', change.uri, path, {}, find_buf(path))
          item.overwrite = exists
          if exists then
            item.base = read_file(path) or {}
          end
        end
      elseif change.kind == 'rename' then
        local old, new = vim.uri_to_fname(change.oldUri), vim.uri_to_fname(change.newUri)
        if uv.fs_stat(new) and not opts.overwrite then
          if not opts.ignoreIfExists then
            error(('cannot rename %s: %s already exists'):format(rel(old), rel(new)))
          end
        else
          -- Edits to the old name earlier in the list travel with the file.
          local item = by_uri[change.oldUri]
          if item and item.kind == 'edit' then
            item.kind, item.uri, item.path = 'rename', change.newUri, new
            by_uri[change.newUri] = item
          else
            local base, bufnr = base_of(old)
            if not base then
              error(('cannot rename %s: it does not exist'):format(rel(old)))
            end
            item = new_item('rename', change.newUri, new, base, bufnr)
          end
          item.old_path = old
          item.overwrite = uv.fs_stat(new) ~= nil
          by_uri[change.oldUri] = nil
        end
      elseif change.kind == 'delete' then
        local path = vim.uri_to_fname(change.uri)
        local stat = uv.fs_stat(path)
        if stat then
          local base, bufnr
          if stat.type == 'directory' then
            base = { ('(directory%s)'):format(opts.recursive and ', with everything in it' or '') }
          else
            base, bufnr = base_of(path)
          end
          local item = new_item('delete', change.uri, path, base, bufnr)
          item.proposed = {}
          item.directory = stat.type == 'directory'
          item.recursive = opts.recursive
        elseif not opts.ignoreIfNotExists then
          error(('cannot delete %s: it does not exist'):format(rel(path)))
        end
      elseif change.kind then
        error(('unsupported change kind %q'):format(change.kind))
      else
        text_edit(change.textDocument.uri, change.textDocument.version, change.edits or {})
      end
    end
  elseif edit.changes then
    local uris = vim.tbl_keys(edit.changes)
    table.sort(uris)
    for _, uri in ipairs(uris) do
      text_edit(uri, nil, edit.changes[uri])
    end
  end

  for _, item in ipairs(items) do
    if item.kind == 'edit' and item.version and item.bufnr and item.version ~= item.base_version then
      item.status = 'stale'
      item.reason = ('the buffer was edited after the agent proposed this change (buffer version %d, proposal made for version %d)')
        :format(item.base_version, item.version)
    end
  end
  return items
end

local marks = { pending = '[ ]', accepted = '[✓]', rejected = '[✗]', stale = '[!]' }
local letters = { edit = 'M', create = 'A', rename = 'R', delete = 'D' }

function Session:summary_lines()
  local lines = {
    ('Warden %s%s — %d change%s'):format(
      self.undo and 'undo review' or 'patch review',
      self.label and (': ' .. self.label:gsub('^Warden:%s*', '')) or '',
      #self.items,
      #self.items == 1 and '' or 's'
    ),
    'ga accept file · gr reject file · gA accept all · gR reject all · ]f [f next/prev · q reject the rest · :w accepts the proposed side',
  }
  for i, item in ipairs(self.items) do
    local name = rel(item.path)
    if item.kind == 'rename' then
      name = rel(item.old_path) .. ' → ' .. name
    end
    local extra = ''
    if item.status == 'stale' then
      extra = '  — stale: ' .. (item.reason or '')
    elseif item.kind == 'create' then
      extra = item.overwrite and '  (replaces the existing file)' or '  (new file)'
    elseif item.kind == 'delete' then
      extra = '  (deleted)'
    end
    if item.edited then
      extra = extra .. '  (you edited the proposal)'
    end
    table.insert(lines, ('%s %s %s  %s%s'):format(i == self.pos and '>' or ' ', marks[item.status], letters[item.kind], name, extra))
  end
  return lines
end

function Session:render_summary()
  local buf = self.summary_buf
  if not (buf and vim.api.nvim_buf_is_valid(buf)) then
    return
  end
  local lines = self:summary_lines()
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  require('warden.compat').highlight(buf, ns, 'Title', 0, 0, -1)
  require('warden.compat').highlight(buf, ns, 'Comment', 1, 0, -1)
  local groups = { accepted = 'DiffAdd', rejected = 'DiffDelete', stale = 'ErrorMsg' }
  for i, item in ipairs(self.items) do
    if groups[item.status] then
      require('warden.compat').highlight(buf, ns, groups[item.status], i + 1, 2, 7)
    end
  end
end

-- Shows item i in the two diff windows.
function Session:show(i)
  if i < 1 or i > #self.items then
    return
  end
  self.pos = i
  local item = self.items[i]
  for _, win in ipairs({ self.left_win, self.right_win }) do
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_call(win, function()
        vim.cmd('diffoff')
      end)
    end
  end
  if vim.api.nvim_win_is_valid(self.left_win) and vim.api.nvim_win_is_valid(self.right_win) then
    vim.api.nvim_win_set_buf(self.left_win, item.current_buf)
    vim.api.nvim_win_set_buf(self.right_win, item.proposed_buf)
    for _, win in ipairs({ self.left_win, self.right_win }) do
      vim.api.nvim_win_call(win, function()
        vim.cmd('diffthis')
      end)
    end
  end
  self:render_summary()
end

function Session:pending()
  for i, item in ipairs(self.items) do
    if item.status == 'pending' then
      return i
    end
  end
end

-- Marks one item decided; finishes when none is left pending.
function Session:decide(i, status)
  local item = self.items[i or self.pos]
  if not item or self.done then
    return
  end
  if item.status == 'stale' and status == 'accepted' then
    vim.notify('Warden: ' .. rel(item.path) .. ' is stale and cannot be accepted: ' .. item.reason, vim.log.levels.ERROR)
    return
  end
  if item.status ~= 'stale' then
    item.status = status
  end
  local nxt = self:pending()
  if nxt then
    self:show(nxt)
  else
    self:finish()
  end
end

function Session:accept(i)
  self:decide(i, 'accepted')
end

function Session:reject(i)
  self:decide(i, 'rejected')
end

local function decide_all(self, status)
  for _, item in ipairs(self.items) do
    if item.status == 'pending' then
      item.status = status
    end
  end
  self:finish()
end

function Session:accept_all()
  decide_all(self, 'accepted')
end

function Session:reject_all()
  decide_all(self, 'rejected')
end

function Session:next()
  self:show(self.pos % #self.items + 1)
end

function Session:prev()
  self:show((self.pos - 2) % #self.items + 1)
end

--- Replaces the proposed side of item i (as if the user had edited it).
function Session:set_proposed(i, lines)
  local item = self.items[i]
  vim.api.nvim_buf_set_lines(item.proposed_buf, 0, -1, false, lines)
end

-- Edits only the lines that differ, so marks and folds elsewhere survive.
local function set_lines_minimal(bufnr, lines)
  local old = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local first = 1
  while first <= #old and first <= #lines and old[first] == lines[first] do
    first = first + 1
  end
  local old_last, new_last = #old, #lines
  while old_last >= first and new_last >= first and old[old_last] == lines[new_last] do
    old_last, new_last = old_last - 1, new_last - 1
  end
  if first > old_last and first > new_last then
    return
  end
  vim.api.nvim_buf_set_lines(bufnr, first - 1, old_last, false, vim.list_slice(lines, first, new_last))
end

local function load_buf(path)
  local b = find_buf(path)
  if b then
    return b
  end
  b = vim.fn.bufadd(path)
  vim.fn.bufload(b)
  vim.bo[b].buflisted = true
  -- bufload() detects no file type, so FileType (and with it the language
  -- servers, Warden's own included) would never see the buffer.
  if vim.bo[b].filetype == '' then
    vim.api.nvim_buf_call(b, function()
      vim.cmd('silent! filetype detect')
    end)
  end
  return b
end

-- Writes an applied buffer, or marks it when the user asked not to write.
local function settle(bufnr, write, unwritten)
  if write then
    vim.fn.mkdir(vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':h'), 'p')
    -- A file read without a final line break keeps it that way: the
    -- edit's text says where the line breaks go, 'fixeol' would add one
    -- (which the server, reading the buffer, would not see).
    local fixeol = vim.bo[bufnr].fixendofline
    if not vim.bo[bufnr].endofline then
      vim.bo[bufnr].fixendofline = false
    end
    vim.api.nvim_buf_call(bufnr, function()
      vim.cmd('silent keepalt write!')
    end)
    vim.bo[bufnr].fixendofline = fixeol
  else
    vim.bo[bufnr].buflisted = true
    vim.b[bufnr].warden_applied = true
    table.insert(unwritten, vim.api.nvim_buf_get_name(bufnr))
  end
end

-- Whether the target changed since the review opened (the agent's proposal
-- would overwrite what the user did meanwhile).
local function changed_since_open(item)
  local path = item.kind == 'rename' and item.old_path or item.path
  local b = find_buf(path)
  if b then
    if item.bufnr == b then
      -- The changedtick too: a buffer no client tracks has no LSP version.
      return buf_version(b) ~= item.base_version or vim.api.nvim_buf_get_changedtick(b) ~= item.base_tick
    end
    return not lines_equal(vim.api.nvim_buf_get_lines(b, 0, -1, false), item.base)
  end
  if item.kind == 'create' and not item.overwrite then
    return uv.fs_stat(path) ~= nil
  end
  if item.directory then
    return false
  end
  local now = read_file(path)
  return now == nil or not lines_equal(now, item.base)
end

-- Writes lines to a new file at path, with no line break after the last.
local function write_bytes(path, lines)
  local fd, err = io.open(path, 'wb')
  if not fd then
    error(('could not create %s: %s'):format(rel(path), err))
  end
  local ok, werr = fd:write(table.concat(lines, '\n'))
  fd:close()
  if not ok then
    error(('could not write %s: %s'):format(rel(path), werr))
  end
end

-- Applies one accepted item. Errors are raised with a readable message.
local function apply_item(item, write, unwritten)
  local lines = item.final
  if item.kind == 'edit' then
    local b = load_buf(item.path)
    set_lines_minimal(b, lines)
    settle(b, write, unwritten)
  elseif item.kind == 'create' then
    if uv.fs_stat(item.path) and not item.overwrite then
      error(rel(item.path) .. ' appeared meanwhile; not overwritten')
    end
    vim.fn.mkdir(vim.fn.fnamemodify(item.path, ':h'), 'p')
    if item.noeol and not find_buf(item.path) then
      -- Neovim's changes to a buffer tell language servers of a final
      -- line break whatever 'eol' says: such a file is written as it is,
      -- then opened, so that the buffer reads from it that it has none.
      write_bytes(item.path, lines)
      load_buf(item.path)
      return
    end
    local b = load_buf(item.path)
    vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
    settle(b, true, unwritten) -- a created file must exist on disk
  elseif item.kind == 'rename' then
    if uv.fs_stat(item.path) and not item.overwrite then
      error(rel(item.path) .. ' appeared meanwhile; not overwritten')
    end
    local old = find_buf(item.old_path)
    if old and vim.bo[old].modified then
      vim.api.nvim_buf_call(old, function()
        vim.cmd('silent keepalt write!')
      end)
    end
    vim.fn.mkdir(vim.fn.fnamemodify(item.path, ':h'), 'p')
    local ok, err = uv.fs_rename(item.old_path, item.path)
    if not ok then
      error(('rename %s → %s: %s'):format(rel(item.old_path), rel(item.path), err))
    end
    local b = load_buf(item.path)
    if old then
      for _, win in ipairs(vim.api.nvim_list_wins()) do
        if vim.api.nvim_win_get_buf(win) == old then
          vim.api.nvim_win_set_buf(win, b)
        end
      end
      vim.api.nvim_buf_delete(old, { force = true })
    end
    if not lines_equal(vim.api.nvim_buf_get_lines(b, 0, -1, false), lines) then
      set_lines_minimal(b, lines)
      settle(b, write, unwritten)
    end
  elseif item.kind == 'delete' then
    local b = find_buf(item.path)
    local flags = item.directory and (item.recursive and 'rf' or 'd') or ''
    if vim.fn.delete(item.path, flags) ~= 0 then
      error('could not delete ' .. rel(item.path))
    end
    if b then
      vim.api.nvim_buf_delete(b, { force = true })
    end
  end
end

function Session:close_ui()
  self.closing = true
  if self.tab and vim.api.nvim_tabpage_is_valid(self.tab) then
    if #vim.api.nvim_list_tabpages() > 1 then
      local tabnr = vim.api.nvim_tabpage_get_number(self.tab)
      pcall(vim.cmd, 'tabclose! ' .. tabnr)
    end
  end
  if self.prev_tab and vim.api.nvim_tabpage_is_valid(self.prev_tab) then
    pcall(vim.api.nvim_set_current_tabpage, self.prev_tab)
  end
  for _, item in ipairs(self.items) do
    for _, b in ipairs({ item.current_buf, item.proposed_buf }) do
      if b and vim.api.nvim_buf_is_valid(b) then
        pcall(vim.api.nvim_buf_delete, b, { force = true })
      end
    end
  end
  if self.summary_buf and vim.api.nvim_buf_is_valid(self.summary_buf) then
    pcall(vim.api.nvim_buf_delete, self.summary_buf, { force = true })
  end
end

-- Applies what was accepted, closes the tab and produces the reply.
function Session:finish()
  if self.done then
    return
  end
  self.done = true
  if current == self then
    current = nil
  end
  -- Read the proposed sides before the buffers go away.
  for _, item in ipairs(self.items) do
    if item.proposed_buf and vim.api.nvim_buf_is_valid(item.proposed_buf) then
      item.final = vim.api.nvim_buf_get_lines(item.proposed_buf, 0, -1, false)
    else
      item.final = item.proposed
    end
    if item.kind ~= 'delete' and not lines_equal(item.final, item.proposed) then
      item.edited = true
    end
  end
  self:close_ui()

  local write = self.write
  local unwritten = {}
  local changes = {}
  for _, item in ipairs(self.items) do
    local outcome, reason = item.status, item.reason
    if outcome == 'accepted' and changed_since_open(item) then
      outcome = 'stale'
      reason = 'the file was edited while the review was open'
    end
    if outcome == 'accepted' then
      local ok, err = pcall(apply_item, item, write, unwritten)
      if not ok then
        outcome, reason = 'failed', tostring(err):gsub('^[^:]*:%d+: ', '')
      elseif item.edited then
        outcome = 'edited'
      end
    end
    table.insert(changes, {
      uri = item.uri,
      oldUri = item.old_path and vim.uri_from_fname(item.old_path) or nil,
      kind = item.kind,
      outcome = outcome,
      reason = reason,
    })
  end

  local applied_all = true
  local parts = {}
  local by = {}
  for _, c in ipairs(changes) do
    if c.outcome ~= 'accepted' then
      applied_all = false
    end
    by[c.outcome] = by[c.outcome] or {}
    table.insert(by[c.outcome], rel(vim.uri_to_fname(c.uri)) .. (c.reason and (' (' .. c.reason .. ')') or ''))
  end
  local words = { edited = 'applied as you edited it', rejected = 'rejected', stale = 'stale, not applied', failed = 'failed' }
  for _, o in ipairs({ 'edited', 'rejected', 'stale', 'failed' }) do
    if by[o] then
      table.insert(parts, words[o] .. ': ' .. table.concat(by[o], ', '))
    end
  end
  -- applied is true when anything landed (as VS Code says for a partly
  -- ticked Refactor Preview): the server then reads back what did. What
  -- did not land is named in failureReason either way.
  local accepted = #(by.accepted or {}) + #(by.edited or {})
  local result = { applied = accepted > 0 }
  if not applied_all then
    result.failureReason = ('the user accepted %d of %d change%s%s'):format(
      accepted,
      #changes,
      #changes == 1 and '' or 's',
      #parts > 0 and ('; ' .. table.concat(parts, '; ')) or ''
    )
    for i, c in ipairs(changes) do
      if c.outcome ~= 'accepted' and c.outcome ~= 'edited' then
        result.failedChange = i - 1
        break
      end
    end
  end
  -- Extra detail for Warden's server; other fields are standard LSP.
  result.warden = { changes = changes }

  M.last = { result = result, changes = changes, label = self.label, undo = self.undo }
  local what = (self.label or 'patch'):gsub('^Warden:%s*', '')
  local summary
  if self.undo and applied_all then
    summary = { 'Warden: undid ' .. what }
  else
    summary = { 'Warden: ' .. (self.undo and ('undo of ' .. what) or what) .. ': ' }
    if by.accepted then
      table.insert(summary, (self.undo and 'undone: ' or 'applied: ') .. table.concat(by.accepted, ', '))
    end
    if #parts > 0 then
      table.insert(summary, by.accepted and '; ' or '')
      table.insert(summary, table.concat(parts, '; '))
    end
  end
  M.last.message = table.concat(summary)
  local level = (by.stale or by.failed) and vim.log.levels.ERROR or vim.log.levels.INFO
  -- After the reply: a long message's hit-enter prompt must not hold it up.
  vim.schedule(function()
    vim.notify(table.concat(summary), level)
    if #unwritten > 0 then
      vim.notify('Warden: applied but not written (review.write = false): ' .. table.concat(vim.tbl_map(rel, unwritten), ', '), vim.log.levels.WARN)
    end
  end)
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'WardenReviewDone', modeline = false })
  if self.on_done then
    self.on_done(result)
  end
end

local function map_keys(self, buf)
  local function map(lhs, fn, desc)
    vim.keymap.set('n', lhs, fn, require('warden.compat').with_buf(buf, { nowait = true, desc = desc }))
  end
  map('ga', function() self:accept() end, 'Warden: accept this file')
  map('gr', function() self:reject() end, 'Warden: reject this file')
  map('gA', function() self:accept_all() end, 'Warden: accept all')
  map('gR', function() self:reject_all() end, 'Warden: reject all')
  map(']f', function() self:next() end, 'Warden: next file')
  map('[f', function() self:prev() end, 'Warden: previous file')
  map('q', function() self:reject_all() end, 'Warden: reject the rest and close')
end

-- The review's buffer names are what the tab line shows as its title: the
-- file's own name and its place in the review, with no directory, which
-- the tab line would shorten to one letter ("w//2/p/stats.go").
function Session:title()
  return self.undo and 'Warden undo review' or 'Warden review'
end

function Session:buf_name(path, side, i)
  return ('%s: %s (%s, %d of %d)'):format(self:title(), vim.fn.fnamemodify(path, ':t'), side, i, #self.items)
end

function Session:open()
  self.prev_tab = vim.api.nvim_get_current_tabpage()
  for i, item in ipairs(self.items) do
    local ft = guess_filetype(item.path, item.bufnr)
    local left_path = item.kind == 'rename' and item.old_path or item.path
    item.current_buf = scratch(self:buf_name(left_path, 'current', i), item.kind == 'create' and not item.overwrite and {} or item.base, ft, false)
    item.proposed_buf = scratch(self:buf_name(item.path, 'proposed', i), item.proposed, ft, item.kind ~= 'delete')
    vim.bo[item.proposed_buf].buftype = 'acwrite'
    vim.api.nvim_create_autocmd('BufWriteCmd', require('warden.compat').with_buf(item.proposed_buf, {
      callback = function()
        vim.bo[item.proposed_buf].modified = false
        self:accept(item.index)
      end,
    }))
  end
  local changes = ('%d change%s'):format(#self.items, #self.items == 1 and '' or 's')
  self.summary_buf = scratch(('%s: %s'):format(self:title(), changes), {}, 'warden-review', false)

  vim.cmd('tabnew')
  self.tab = vim.api.nvim_get_current_tabpage()
  local scratch_tab_buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_win_set_buf(0, self.summary_buf)
  if vim.api.nvim_buf_is_valid(scratch_tab_buf) and scratch_tab_buf ~= self.summary_buf then
    pcall(vim.api.nvim_buf_delete, scratch_tab_buf, { force = true })
  end
  self.summary_win = vim.api.nvim_get_current_win()
  vim.wo[self.summary_win].wrap = false
  vim.cmd('belowright split')
  self.left_win = vim.api.nvim_get_current_win()
  vim.cmd('belowright vsplit')
  self.right_win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_height(self.summary_win, math.min(#self.items + 2, math.max(3, math.floor(vim.o.lines / 3))))

  for _, item in ipairs(self.items) do
    map_keys(self, item.current_buf)
    map_keys(self, item.proposed_buf)
  end
  map_keys(self, self.summary_buf)

  -- Closing the review any other way rejects what is left (fail closed):
  -- :q (or <C-w>c) on any of its windows, or closing its tab. The agent
  -- would otherwise wait for an answer that never comes.
  local review_wins = { [self.summary_win] = true, [self.left_win] = true, [self.right_win] = true }
  vim.api.nvim_create_autocmd('WinClosed', {
    callback = function(ev)
      if self.done then
        return true
      end
      local win = tonumber(ev.match or vim.fn.expand('<amatch>'))
      if win and review_wins[win] and not self.closing then
        self.abandoned = true
        vim.schedule(function()
          self:reject_all()
        end)
        return true
      end
    end,
  })
  vim.api.nvim_create_autocmd('TabClosed', {
    callback = function()
      if self.done then
        return true
      end
      if not vim.api.nvim_tabpage_is_valid(self.tab) then
        vim.schedule(function()
          self:reject_all()
        end)
        return true
      end
    end,
  })

  self:show(self:pending() or 1)
  vim.api.nvim_set_current_win(self.right_win)
end

-- Whether one of the review's windows was closed (:q) by other means than
-- the review itself. 0.7 may not fire WinClosed for a window closed by keys
-- the modal loop feeds, so the loop looks for itself.
function Session:abandoned_ui()
  if self.abandoned then
    return true
  end
  if self.closing then
    return false
  end
  for _, win in ipairs({ self.summary_win, self.left_win, self.right_win }) do
    if win and not vim.api.nvim_win_is_valid(win) then
      return true
    end
  end
  return false
end

-- The modal loop for 0.7 (see the header). Review keys are handled here;
-- everything else goes to Neovim as if typed.
local needs_more = {
  ['d'] = true, ['c'] = true, ['y'] = true, ['<'] = true, ['>'] = true, ['='] = true,
  ['z'] = true, ['Z'] = true, ['"'] = true, ["'"] = true, ['`'] = true, ['m'] = true,
  ['f'] = true, ['F'] = true, ['t'] = true, ['T'] = true, ['r'] = true, ['@'] = true,
  ['\23'] = true, -- CTRL-W
}

function Session:modal()
  local function getkey()
    local ok, k = pcall(vim.fn.getcharstr)
    if not ok then
      return nil -- CTRL-C
    end
    return k
  end
  while not self.done do
    if self:abandoned_ui() then
      self:reject_all() -- a review window was closed (:q)
      break
    end
    pcall(vim.cmd, 'redraw')
    local k = getkey()
    if k == nil then
      self:reject_all()
      break
    end
    local in_review = vim.api.nvim_get_current_tabpage() == self.tab
    local handled = false
    if in_review and (k == 'g' or k == ']' or k == '[') then
      local k2 = getkey() or ''
      local actions = {
        ga = 'accept', gr = 'reject', gA = 'accept_all', gR = 'reject_all', [']f'] = 'next', ['[f'] = 'prev',
      }
      local act = actions[k .. k2]
      if act then
        self[act](self)
        handled = true
      else
        k = k .. k2
      end
    elseif in_review and k == 'q' then
      self:reject_all()
      handled = true
    elseif k == ':' or k == '/' or k == '?' then
      -- A command line fed alone is abandoned at once; read it whole here.
      local ok, line = pcall(vim.fn.input, { prompt = k, completion = k == ':' and 'command' or nil })
      if ok and line ~= '' then
        k = k .. line .. '\r'
      else
        handled = true
      end
    elseif needs_more[k] or k:match('^[1-9]$') then
      local seq = k
      while seq:match('^%d+$') do
        seq = seq .. (getkey() or '')
      end
      local last = seq:sub(-1)
      if needs_more[last] then
        seq = seq .. (getkey() or '')
        if seq:match('[dcy<>=][ia]$') then
          seq = seq .. (getkey() or '')
        end
      end
      k = seq
    end
    if not handled and not self.done then
      vim.api.nvim_feedkeys(k, 'mx!', false)
    end
    if not self.done and self:abandoned_ui() then
      self:reject_all() -- a review window was closed (:q)
    end
  end
end

--- workspace/applyEdit handler.
function M.handler(_, params, ctx)
  params = params or {}
  local client = ctx and vim.lsp.get_client_by_id(ctx.client_id)
  local encoding = client and client.offset_encoding or 'utf-16'
  if current then
    return { applied = false, failureReason = 'another Warden review is still open in the editor; decide it first' }
  end
  root = client and client.config.root_dir or nil
  local ok, items = pcall(build_items, params.edit or {}, encoding)
  if not ok then
    local reason = tostring(items):gsub('^[^:]*:%d+: ', '')
    vim.notify('Warden: the agent\'s edit cannot be applied: ' .. reason, vim.log.levels.ERROR)
    return { applied = false, failureReason = reason }
  end
  if #items == 0 then
    return { applied = true }
  end
  local session = setmetatable({
    label = params.label,
    -- warden.undo's edit: reads as undo, not as a new change.
    undo = require('warden.progress').running('Undoing'),
    items = items,
    pos = 1,
    write = require('warden').config.review.write ~= false,
  }, Session)
  current = session

  local co = coroutine.running()
  local result
  session.on_done = function(res)
    result = res
    if co and coroutine.status(co) == 'suspended' then
      coroutine.resume(co)
    end
  end
  session:open()
  for _, item in ipairs(items) do
    if item.status == 'stale' then
      vim.notify('Warden: ' .. rel(item.path) .. ': ' .. item.reason .. '; it will not be applied', vim.log.levels.ERROR)
    end
  end
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'WardenReviewOpen', modeline = false })
  if not session.done and not session:pending() then
    -- Everything is stale: nothing to decide.
    session:finish()
  end
  if not session.done then
    if co then
      -- WinClosed does not fire for a window closed by keys run from inside
      -- this handler, so a closed review window is also looked for here.
      local function watch()
        if session.done then
          return
        end
        if session:abandoned_ui() then
          return session:reject_all()
        end
        vim.defer_fn(watch, 100)
      end
      vim.defer_fn(watch, 100)
      coroutine.yield()
    else
      session:modal()
    end
  end
  return result
end

--- :WardenReview {sub}
function M.command(sub)
  local s = current
  if not s then
    vim.notify('Warden: no patch review is open', vim.log.levels.WARN)
    return
  end
  local actions = {
    accept = 'accept', reject = 'reject', acceptall = 'accept_all', rejectall = 'reject_all',
    next = 'next', prev = 'prev', quit = 'reject_all',
  }
  local act = actions[sub or '']
  if not act then
    vim.notify('Warden: :WardenReview wants one of ' .. table.concat(M.subcommands, ', '), vim.log.levels.ERROR)
    return
  end
  s[act](s)
end

return M
