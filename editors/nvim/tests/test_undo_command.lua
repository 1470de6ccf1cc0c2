-- What a command the agent ran changed is undone like a patch: the agent's
-- shell tool (the real binary, its real sandbox; only the model is
-- scripted) deletes and modifies files in the workspace without asking;
-- :Warden undo opens the undo review, and accepted, it brings every file
-- back byte for byte (no final newline, CRLF, not UTF-8) with its mode.
-- :Warden undo 2 takes back two commands, one review each.
local H = require('helpers')

local uv = vim.uv or vim.loop

local function shell(script)
  return { calls = { { name = 'shell', args = vim.json.encode({ command = { 'sh', '-c', script } }) } } }
end

-- Writes files byte for byte (H.workspace writes lines), with their modes.
local function put(ws, files)
  for rel, f in pairs(files) do
    local path = ws .. '/' .. rel
    vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
    local fd = assert(io.open(path, 'wb'))
    fd:write(f.bytes)
    fd:close()
    assert(uv.fs_chmod(path, f.mode))
  end
end

local function bytes(path)
  local fd = io.open(path, 'rb')
  if not fd then
    return nil
  end
  local data = fd:read('*a')
  fd:close()
  return data
end

-- Fails unless every file is there as put wrote it.
local function check(ws, files, when)
  for rel, f in pairs(files) do
    local path = ws .. '/' .. rel
    H.eq(f.bytes, bytes(path), when .. ': ' .. rel .. "'s bytes")
    H.eq(f.mode, bit.band(uv.fs_stat(path).mode, 511), when .. ': ' .. rel .. "'s mode")
  end
end

H.run('undo of a command: reviewed like a patch, files back byte for byte; undo 2', function()
  local model = require('fake_model').start({
    shell('rm -rf src && printf "overwritten\\n" > notes.txt && echo made > made.txt && printf "its end" >> tail.txt'),
    { text = 'Cleaned up.' },
    shell('rm keep.txt'),
    shell('echo more >> notes.txt'),
    { text = 'Twice.' },
  })
  local ws = H.workspace({})
  local files = {
    ['src/a.lua'] = { bytes = 'local a = 1\n', mode = tonumber('644', 8) },
    ['src/tool.sh'] = { bytes = '#!/bin/sh\necho tool\n', mode = tonumber('755', 8) },
    ['src/no_eol.txt'] = { bytes = 'no newline at the end', mode = tonumber('644', 8) },
    ['src/dos.txt'] = { bytes = 'one\r\ntwo\r\n', mode = tonumber('644', 8) },
    ['src/data.bin'] = { bytes = '\0\1\2 mine \255', mode = tonumber('640', 8) },
    ['notes.txt'] = { bytes = 'my notes\n', mode = tonumber('644', 8) },
    ['keep.txt'] = { bytes = 'keep\n', mode = tonumber('644', 8) },
    ['tail.txt'] = { bytes = 'no final newline, ', mode = tonumber('644', 8) },
  }
  put(ws, files)
  H.setup({
    env = { OPENAI_BASE_URL = model.url, OPENAI_API_KEY = 'test-key', WARDEN_MODEL = 'fake-model' },
    config = { settings = { approvalPolicy = 'on-request' } },
  })
  H.open(ws .. '/keep.txt')
  local messages, ends = {}, {}
  vim.lsp.handlers['window/showMessage'] = function(_, r)
    table.insert(messages, r.message)
  end
  H.collect_job_ends(ends)
  local function wait_message(text)
    H.wait(30000, function()
      return vim.tbl_contains(messages, text)
    end, text .. ' (messages: ' .. vim.inspect(messages) .. ')')
  end
  -- Every review is accepted as it opens; what each listed is kept.
  local reviews = {}
  vim.api.nvim_create_autocmd('User', {
    pattern = 'WardenReviewOpen',
    callback = function()
      local s = require('warden.review').current()
      table.insert(reviews, table.concat(s:summary_lines(), '\n'))
      s:accept_all()
    end,
  })
  local function undo(cmd, want_reviews)
    local n, r = #ends, #reviews
    vim.cmd(cmd)
    H.wait(30000, function()
      return #ends > n and (ends[#ends].message or ''):find('undid', 1, true) ~= nil
    end, cmd .. ' to end (ends: ' .. vim.inspect(ends) .. ', messages: ' .. vim.inspect(messages) .. ')')
    H.eq(want_reviews, #reviews - r, cmd .. ': reviews opened (' .. ends[#ends].message .. ')')
    return ends[#ends].message
  end

  -- The agent's command deletes src/, overwrites notes.txt, makes made.txt.
  vim.cmd('Warden ask clean up')
  wait_message('Warden: agent: Cleaned up.')
  H.eq(false, H.exists(ws .. '/src'), 'the command deleted src/')
  H.eq('overwritten\n', bytes(ws .. '/notes.txt'), 'the command overwrote notes.txt')
  H.contains(vim.json.encode(model.requests[2].messages), 'deleted 5 files under src', 'the model was told what the command changed')

  -- :Warden status lists it, newest first, with its time.
  local notify, shown = vim.notify, nil
  vim.notify = function(m)
    shown = m
  end
  vim.cmd('Warden status')
  H.wait(5000, function()
    return shown ~= nil
  end, ':Warden status to answer')
  vim.notify = notify
  H.contains(shown, 'changes: 1 undo can revert (:Warden undo [steps])', ':Warden status counts the change')
  H.truthy(shown:find('\n  %d%d:%d%d:%d%d command `rm %-rf src && printf') ~= nil, ':Warden status lists the command: ' .. shown)
  H.contains(shown, 'deleted 5 files under src/', ':Warden status says what it changed')

  local msg = undo('Warden undo', 1)
  H.contains(msg, 'undid', 'the server reports the undo')
  local listed = reviews[#reviews]
  H.contains(listed, 'Warden undo review', 'the review says it is an undo')
  for _, want in ipairs({ 'A  src/a.lua', 'A  src/no_eol.txt', 'M  notes.txt', 'M  tail.txt', 'D  made.txt' }) do
    H.contains(listed, want, 'the undo review lists it')
  end
  -- What a new buffer cannot hold (bytes that are not text, CRLF, a mode)
  -- Warden writes on disk once the review's part landed, as for a patch.
  H.eq(nil, listed:find('data.bin', 1, true), 'a file that is not text is not reviewed')
  check(ws, files, 'after :Warden undo')
  H.eq(false, H.exists(ws .. '/made.txt'), 'the file the command made is removed')

  -- Two more commands, in one agent run: one deletes keep.txt, open in a
  -- buffer (which still shows it), one changes notes.txt, open since the
  -- undo (reloaded when the run ends). :Warden undo 2 takes both back:
  -- notes.txt through a review, keep.txt on disk only, as its buffer
  -- already shows it.
  vim.cmd('Warden ask once more')
  wait_message('Warden: agent: Twice.')
  H.eq(false, H.exists(ws .. '/keep.txt'), 'the second run deleted keep.txt')
  local notes = vim.fn.bufnr(ws .. '/notes.txt')
  -- The answer may come before the run's end, which reloads the buffer.
  H.wait(5000, function()
    return vim.deep_equal({ 'my notes', 'more' }, vim.api.nvim_buf_get_lines(notes, 0, -1, false))
  end, 'the open notes.txt to be reloaded after the run')
  msg = undo('Warden undo 2', 1)
  H.eq(2, select(2, msg:gsub('undid', '')), 'two changes undone: ' .. msg)
  H.contains(reviews[#reviews], 'M  notes.txt', 'the second undo reviewed notes.txt')
  check(ws, files, 'after :Warden undo 2')
  H.eq({ 'keep' }, vim.api.nvim_buf_get_lines(vim.fn.bufnr(ws .. '/keep.txt'), 0, -1, false), 'keep.txt\'s buffer')
end)
