import type { ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
/** A text field with its label and, under it, what the server said about it. */
export function Field(props: {
  id: string
  /** Text, or text with a visually hidden part that tells same-looking fields apart for a screen reader. */
  label: ComponentChildren
  type?: 'text' | 'password'
  autocomplete: string
  inputMode?: 'numeric'
  error?: string
  /** What the field holds at first (the user may change it). */
  initial?: string
  /** The field may be left empty. */
  optional?: boolean
  /** A text area of this many lines (a value per line, or a pasted file) instead of a one-line input. */
  rows?: number
}) {
  const described = props.error ? `${props.id}-error` : undefined
  const attributes = {
    id: props.id,
    name: props.id,
    autocomplete: props.autocomplete,
    inputMode: props.inputMode,
    required: !props.optional,
    defaultValue: props.initial,
    'aria-invalid': props.error ? ('true' as const) : undefined,
    'aria-describedby': described,
  }
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      {props.rows ? (
        <textarea rows={props.rows} {...attributes} />
      ) : props.type === 'password' ? (
        <input type="password" {...attributes} />
      ) : (
        <input type="text" {...attributes} />
      )}
      {props.error && (
        <p id={described} class="field-error">
          {props.error}
        </p>
      )}
    </div>
  )
}

/** A choice among fixed values, with its label. */
export function SelectField(props: { id: string; label: ComponentChildren; options: readonly string[]; initial?: string }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <select id={props.id} name={props.id}>
        {/* `selected`, not the select's value: Preact would set that again on every render, undoing the reader's choice. */}
        {props.options.map((option) => (
          <option key={option} value={option} selected={option === props.initial}>
            {option}
          </option>
        ))}
      </select>
    </div>
  )
}

/** The value of the form's field `name`. */
export const fieldValue = (form: HTMLFormElement, name: string) => (form.elements.namedItem(name) as HTMLInputElement).value

/**
 * A button that copies `text` to the clipboard, and what came of it read out beside it. The clipboard may be
 * refused (no permission, page not focused): then the reader selects the text and copies it by hand.
 */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [outcome, setOutcome] = useState('')
  const copy = async () => {
    const done = await navigator.clipboard.writeText(text).then(
      () => true,
      () => false,
    )
    setOutcome(done ? 'Copied.' : 'The browser refused the clipboard: select the text and copy it.')
  }
  return (
    <>
      <button type="button" class="secondary" onClick={copy}>
        {label}
      </button>
      <p role="status">{outcome}</p>
    </>
  )
}
