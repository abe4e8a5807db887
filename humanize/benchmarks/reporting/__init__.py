"""The reporting, one job: present a stored run to people.

Markdown/HTML reports (:mod:`.report`), plots (:mod:`.plots`), robustness cards (:mod:`.card`,
:mod:`.card_render`), per-document views (:mod:`.documents`, :mod:`.documents_page`), exports
(:mod:`.export`) and the attack tour (:mod:`.attack_tour`). Reads the runner's store; runs nothing.
"""
