// Drives `a2a-grpc console` in Debian's chromium (playwright-core, no bundled
// browser): the card, a review with its findings table, an INPUT_REQUIRED
// exchange on one task, a cancel, the task list with filters and paging, a
// dead letter retried, the charts. Run by tests/console/test_browser.py,
// which starts the agent and the console and checks the outcome printed here.
//
//   CONSOLE_URL=http://127.0.0.1:8090/ DIFF=examples/diffs/sql_injection.diff \
//   SHOTS=build/ci-artifacts/console node console/e2e/drive.mjs
//
// Prints one JSON line: {"reviewTask", "questionTask", "canceledTask", "retried"}.
import { mkdtempSync, readFileSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { chromium } from 'playwright-core';

const url = process.env.CONSOLE_URL;
const diffPath = process.env.DIFF;
const shots = process.env.SHOTS;
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const timeout = 30_000;
if (!url || !diffPath || !shots) throw new Error('CONSOLE_URL, DIFF and SHOTS are needed');
mkdirSync(shots, { recursive: true });
const diff = readFileSync(diffPath, 'utf8');

const profile = mkdtempSync(join(tmpdir(), 'a2a-console-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: chromiumPath,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1280, height: 900 },
});
const page = context.pages()[0] ?? (await context.newPage());
page.setDefaultTimeout(timeout);
const problems = [];
page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
page.on('console', (msg) => msg.type() === 'error' && problems.push(`console error: ${msg.text()}`));
const out = {};

async function step(name, fn) {
  try {
    await fn();
  } catch (err) {
    await page.screenshot({ path: join(shots, `failed-${name}.png`), fullPage: true }).catch(() => {});
    throw new Error(`step ${name}: ${err.message}`);
  }
}

async function shot(name) {
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
}

/** Pastes text into the composer the way a browser does (a paste event with clipboard data). */
async function paste(text) {
  await page.getByTestId('composer').evaluate((el, t) => {
    const data = new DataTransfer();
    data.setData('text/plain', t);
    el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  }, text);
}

/** Drops a file on the composer (drag and drop from the desktop). */
async function drop(name, text) {
  const data = await page.evaluateHandle(
    ([n, t]) => {
      const dt = new DataTransfer();
      dt.items.add(new File([t], n, { type: '' }));
      return dt;
    },
    [name, text],
  );
  await page.getByTestId('dropzone').dispatchEvent('drop', { dataTransfer: data });
}

async function newConversation() {
  await page.goto(`${url}#chat`);
  await page.getByTestId('new-conversation').click();
}

async function taskId() {
  return (await page.getByTestId('task-id').textContent()).trim();
}

try {
  await step('card', async () => {
    await page.goto(url);
    await page.getByTestId('agent-name').filter({ hasText: 'Code Review Agent' }).waitFor();
    await page.getByTestId('skill').first().waitFor();
    await page.getByTestId('signature').filter({ hasText: 'unsigned' }).waitFor();
    await page.getByTestId('raw-toggle').click();
    await page.getByTestId('raw-json').filter({ hasText: '"supportedInterfaces"' }).waitFor();
    await shot('card');
    await page.getByTestId('raw-toggle').click();
  });

  await step('review', async () => {
    await newConversation();
    await paste(diff);
    await page.getByTestId('attachment').filter({ hasText: 'pasted.diff · text/x-diff' }).waitFor();
    await page.getByTestId('send').click();
    const table = page.getByTestId('findings-table');
    await table.locator('td', { hasText: 'S608' }).waitFor();
    await page.getByTestId('transition').locator('[data-state="completed"]').waitFor();
    out.reviewTask = await taskId();
    await shot('review');
  });

  await step('input-required', async () => {
    await newConversation();
    await page.getByTestId('composer').fill('Please review my change');
    await page.getByTestId('send').click();
    await page.getByTestId('question').waitFor();
    await page.getByTestId('composer-hint').filter({ hasText: 'The agent asks a question' }).waitFor();
    const asked = await taskId();
    await drop(basename(diffPath), diff);
    await page.getByTestId('attachment').filter({ hasText: `${basename(diffPath)} · text/x-diff` }).waitFor();
    await page.getByTestId('send').filter({ hasText: 'Answer' }).click();
    await page.getByTestId('findings-table').locator('td', { hasText: 'S608' }).waitFor();
    await page.getByTestId('transition').locator('[data-state="completed"]').waitFor();
    const answered = await taskId();
    if (answered !== asked) throw new Error(`the answer went to task ${answered}, not to ${asked}`);
    out.questionTask = asked;
    await shot('input-required');
  });

  await step('cancel', async () => {
    await newConversation();
    await page.getByTestId('composer').fill('Another change, diff to follow');
    await page.getByTestId('send').click();
    await page.getByTestId('question').waitFor();
    const id = await taskId();
    await page.goto(`${url}#task/${id}`);
    await page.getByTestId('detail-id').filter({ hasText: id }).waitFor();
    await page.getByTestId('cancel').click();
    await page.getByTestId('detail-state').locator('[data-state="canceled"]').waitFor();
    await page.getByTestId('timeline').locator('[data-state="canceled"]').waitFor();
    out.canceledTask = id;
  });

  await step('tasks', async () => {
    await page.goto(`${url}#tasks`);
    await page.getByTestId('task-row').nth(2).waitFor();
    await shot('tasks');
    await page.getByTestId('filter-state').selectOption('canceled');
    await page.getByTestId('apply-filters').click();
    await page.getByTestId('task-count').filter({ hasText: '1 of 1 tasks' }).waitFor();
    await page.locator(`[data-testid="task-row"][data-task-id="${out.canceledTask}"]`).waitFor();
    await page.getByTestId('filter-state').selectOption('');
    await page.getByTestId('page-size').fill('2');
    await page.getByTestId('apply-filters').click();
    await page.getByTestId('task-count').filter({ hasText: 'page 1 · 2 of' }).waitFor();
    await page.getByTestId('next-page').click();
    await page.getByTestId('task-count').filter({ hasText: 'page 2 ·' }).waitFor();
  });

  await step('dead-letters', async () => {
    await page.goto(`${url}#ops`);
    const row = page.getByTestId('dead-letter').first();
    await row.waitFor();
    const seq = await row.getAttribute('data-seq');
    await shot('dead-letters');
    await page.getByTestId(`retry-${seq}`).click();
    await page.locator(`[data-testid="dead-letter"][data-seq="${seq}"]`).waitFor({ state: 'detached' });
    out.retried = Number(seq);
  });

  await step('charts', async () => {
    await page.goto(`${url}#charts`);
    await page.getByTestId('chart').first().waitFor();
    await page.getByTestId('tasks-created').waitFor();
    await page.waitForTimeout(3500); // a second scrape: the rates have a line
    await shot('charts');
  });
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
if (problems.length) throw new Error(problems.join('\n'));
console.log(JSON.stringify(out));
