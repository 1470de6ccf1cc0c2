-- Patch review against the real server: warden.patch.apply sends a real
-- workspace/applyEdit; the review tab decides what lands; the server's own
-- read-back (the job's closing message) says what it learned. Then undo.
local H = require('helpers')

local function patch(lines)
  return table.concat(lines, '\n') .. '\n'
end

-- The job's end: the server reports what landed in its closing $/progress
-- message, and warns with window/showMessage when not everything did.
local ends, warnings = {}, {}

local function apply(text, ws)
  local n = #ends
  local res, err = H.execute('warden.patch.apply', { { patch = text, root = ws } })
  H.eq(nil, err, 'warden.patch.apply error')
  H.truthy(res and res.jobId, 'a job was started')
  H.wait(20000, function()
    return #ends > n
  end, 'the patch job to end')
  return ends[#ends]
end

H.run('patch review: accept, reject, partly, edited, stale, undo', function()
  local ws = H.workspace({
    ['a.txt'] = 'alpha\nbeta\ngamma',
    ['b.txt'] = 'one\ntwo',
    ['old.txt'] = 'moving',
    ['gone.txt'] = 'bye',
  })
  H.setup()
  local client, a_buf = H.open(ws .. '/a.txt')

  vim.lsp.handlers['window/showMessage'] = function(_, r)
    table.insert(warnings, r.message)
  end
  H.collect_job_ends(ends)
  local function end_message()
    return ends[#ends].message or ''
  end

  -- 1. Accepted: one file edited (open in a buffer), one created, one
  -- renamed, one deleted; the review lists all four, accept all.
  local listed
  H.on_review(function(s)
    listed = s:summary_lines()
    -- The keys, as a user would type them; 'x' runs them now, before the
    -- handler waits (0.10+ yields, 0.7 reads keys itself).
    vim.api.nvim_feedkeys('gA', 'tx', false)
  end)
  apply(patch({
    '*** Begin Patch',
    '*** Update File: a.txt',
    '@@',
    ' alpha',
    '-beta',
    '+BETA',
    ' gamma',
    '*** Add File: new/c.txt',
    '+created',
    '*** Update File: old.txt',
    '*** Move to: moved.txt',
    '@@',
    '-moving',
    '+moved',
    '*** Delete File: gone.txt',
    '*** End Patch',
  }), ws)
  local text = table.concat(listed, '\n')
  H.contains(text, 'M  a.txt', 'edited file listed')
  H.contains(text, 'A  new/c.txt', 'created file listed')
  H.contains(text, 'R  old.txt → moved.txt', 'renamed file listed')
  H.contains(text, 'D  gone.txt', 'deleted file listed')
  H.eq({ 'alpha', 'BETA', 'gamma' }, H.read(ws .. '/a.txt'), 'a.txt written')
  H.eq({ 'alpha', 'BETA', 'gamma' }, vim.api.nvim_buf_get_lines(a_buf, 0, -1, false), 'a.txt buffer')
  H.eq(false, vim.bo[a_buf].modified, 'the applied buffer is written, not left modified')
  H.eq({ 'created' }, H.read(ws .. '/new/c.txt'), 'created')
  H.eq({ 'moved' }, H.read(ws .. '/moved.txt'), 'renamed and edited')
  H.eq(false, H.exists(ws .. '/old.txt'), 'rename source gone')
  H.eq(false, H.exists(ws .. '/gone.txt'), 'deleted')
  H.contains(end_message(), 'Success', 'the server saw everything land')
  H.eq(1, #vim.api.nvim_list_tabpages(), 'the review tab is closed')

  -- 2. Rejected: nothing changes, and the server knows at once (no edit
  -- is coming to wait for; it waited 2 s before).
  local uv = vim.uv or vim.loop
  local rejected_at
  H.on_review(function()
    vim.api.nvim_feedkeys('gR', 'tx', false)
    rejected_at = uv.hrtime()
  end)
  apply(patch({ '*** Begin Patch', '*** Update File: b.txt', '@@', '-one', '+ONE', '*** End Patch' }), ws)
  local waited_ms = (uv.hrtime() - rejected_at) / 1e6
  print(('rejected patch: the job ended %.0f ms after gR'):format(waited_ms))
  H.eq(true, waited_ms < 1000, ('the job ended %.0f ms after the rejection'):format(waited_ms))
  H.eq({ 'one', 'two' }, H.read(ws .. '/b.txt'), 'b.txt untouched')
  H.contains(end_message(), 'not applied', 'the server saw the rejection')

  -- 3. Partly accepted: a.txt accepted, b.txt rejected, c.txt accepted
  -- after the user edited the proposed side.
  H.on_review(function(s)
    for i, item in ipairs(s.items) do
      if item.path:match('c%.txt$') then
        s:set_proposed(i, { 'created', 'and edited by hand' })
      end
    end
    for i, item in ipairs(s.items) do
      if item.path:match('b%.txt$') then
        s:reject(i)
      else
        s:accept(i)
      end
    end
  end)
  apply(patch({
    '*** Begin Patch',
    '*** Update File: a.txt',
    '@@',
    '-alpha',
    '+ALPHA',
    '*** Update File: b.txt',
    '@@',
    '-two',
    '+TWO',
    '*** Update File: new/c.txt',
    '@@',
    '-created',
    '+created',
    '+by the agent',
    '*** End Patch',
  }), ws)
  H.eq({ 'ALPHA', 'BETA', 'gamma' }, H.read(ws .. '/a.txt'), 'a.txt accepted')
  H.eq({ 'one', 'two' }, H.read(ws .. '/b.txt'), 'b.txt rejected')
  H.eq({ 'created', 'and edited by hand' }, H.read(ws .. '/new/c.txt'), 'c.txt as the user edited it')
  local last = require('warden.review').last
  H.eq(true, last.result.applied, 'applied: something landed')
  H.contains(last.result.failureReason, 'rejected: b.txt', 'failureReason names the rejection')
  H.contains(end_message(), 'only in part', 'the server learned it was partial')
  H.contains(end_message(), 'b.txt', 'the server names b.txt')

  -- 4. Stale: the buffer is edited while the review is open; the change is
  -- not applied, the user is told, the server learns it did not land.
  local errors = {}
  local notify = vim.notify
  vim.notify = function(msg, level)
    if level == vim.log.levels.ERROR then
      table.insert(errors, msg)
    end
  end
  H.on_review(function(s)
    vim.api.nvim_buf_set_lines(a_buf, 2, 3, false, { 'gamma edited meanwhile' })
    s:accept_all()
  end)
  apply(patch({ '*** Begin Patch', '*** Update File: a.txt', '@@', '-BETA', '+beta again', '*** End Patch' }), ws)
  vim.wait(200)
  vim.notify = notify
  H.eq({ 'ALPHA', 'BETA', 'gamma edited meanwhile' }, vim.api.nvim_buf_get_lines(a_buf, 0, -1, false), 'stale edit not applied')
  H.eq('stale', require('warden.review').last.changes[1].outcome, 'reported stale')
  H.contains(table.concat(errors, '\n'), 'stale, not applied: a.txt', 'the user is told')
  H.contains(end_message(), 'not applied', 'the server learned it did not land')
  vim.api.nvim_buf_call(a_buf, function()
    vim.cmd('silent write')
  end)

  -- 5. Undo: a patch lands, then warden.undo takes it back, through a
  -- review like any other edit.
  H.on_review(function(s)
    s:accept_all()
  end)
  apply(patch({ '*** Begin Patch', '*** Update File: b.txt', '@@', '-two', '+two, patched', '*** End Patch' }), ws)
  H.eq({ 'one', 'two, patched' }, H.read(ws .. '/b.txt'), 'patched before undo')
  local undo_listed
  H.on_review(function(s)
    undo_listed = table.concat(s:summary_lines(), '\n')
    s:accept_all()
  end)
  local n = #ends
  vim.cmd('Warden undo')
  H.wait(20000, function()
    return #ends > n
  end, 'undo to end')
  H.contains(undo_listed or '', 'M  b.txt', 'the undo was reviewed')
  H.contains(undo_listed or '', 'Warden undo review', 'the review says it is an undo')
  H.eq({ 'one', 'two' }, H.read(ws .. '/b.txt'), 'undone')
  H.contains(end_message(), 'undid', 'the server reports the undo')
  local undo_msg = require('warden.review').last.message
  H.contains(undo_msg, 'Warden: undid update b.txt', 'the user is told it was undone')
  H.eq(nil, undo_msg:find('applied', 1, true), 'undo does not read as a new change: ' .. undo_msg)

  -- 5b. :q on the review tab rejects what is left, and the agent's request
  -- is answered (it does not wait until :Warden cancel).
  H.on_review(function()
    vim.api.nvim_feedkeys(':q\r', 'tx', false)
  end)
  apply(patch({ '*** Begin Patch', '*** Update File: b.txt', '@@', '-two', '+two, quit', '*** End Patch' }), ws)
  H.eq({ 'one', 'two' }, H.read(ws .. '/b.txt'), ':q: nothing applied')
  H.eq('rejected', require('warden.review').last.changes[1].outcome, ':q rejected the file')
  H.contains(end_message(), 'not applied', 'the server learned it did not land')
  H.eq(1, #vim.api.nvim_list_tabpages(), 'the review tab is closed after :q')
  H.eq(nil, require('warden.review').current(), 'no review left open')

  -- 6. review.write = false: the accepted buffer is left modified but
  -- listed, marked and announced, never hidden; the server reads the buffer.
  require('warden').config.review.write = false
  local warned = {}
  vim.notify = function(msg, level)
    if level == vim.log.levels.WARN then
      table.insert(warned, msg)
    end
  end
  H.on_review(function(s)
    s:accept_all()
  end)
  apply(patch({ '*** Begin Patch', '*** Update File: b.txt', '@@', '-one', '+one, unsaved', '*** End Patch' }), ws)
  vim.wait(200)
  vim.notify = notify
  local b_buf = vim.fn.bufnr(ws .. '/b.txt')
  H.eq({ 'one, unsaved', 'two' }, vim.api.nvim_buf_get_lines(b_buf, 0, -1, false), 'applied to the buffer')
  H.eq({ 'one', 'two' }, H.read(ws .. '/b.txt'), 'not written')
  H.eq(true, vim.bo[b_buf].modified and vim.bo[b_buf].buflisted, 'modified and listed')
  H.eq(true, vim.b[b_buf].warden_applied, 'marked b:warden_applied')
  H.contains(table.concat(warned, '\n'), 'applied but not written', 'the user is told')
  H.contains(end_message(), 'Success', 'the server read the buffer')
end)
