"""The hierlab Streamlit app (``streamlit run app/streamlit_app.py``)."""
